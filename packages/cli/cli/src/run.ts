import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { keelHome } from '@keel/store-jsonl'
import { EXIT } from './exit-codes.js'
import type { CliIo } from './io.js'
import { selectLlm } from './llm.js'
import { checkDirectory } from './open-session.js'
import { startModeOptions } from './start-modes.js'
import { checkKeelHome, selectStore } from './store.js'
import { COMMANDS, closest, parseFlags, USAGE, UsageError } from './usage.js'

/** How `-p` prints. */
export type Output = 'text' | 'json' | 'stream-json'

/** How `-p` reads stdin: the task as text, or user messages as JSON lines. */
export type InputFormat = 'text' | 'stream-json'

/** Flags shared by `keel [task]`, `keel resume` and `keel fork`. */
export const agentOptions = {
  preset: { type: 'string' },
  model: { type: 'string' },
  'base-url': { type: 'string' },
  store: { type: 'string' },
  cwd: { type: 'string' },
  print: { type: 'boolean', short: 'p' },
  output: { type: 'string' },
  'include-partial-messages': { type: 'boolean' },
  'input-format': { type: 'string' },
  last: { type: 'boolean' },
  continue: { type: 'boolean', short: 'c' },
  at: { type: 'string' },
  'idle-timeout': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  ...startModeOptions,
} as const

export type Mode = 'new' | 'resume' | 'fork'

/** Largest piped stdin read as the task or its context. */
const MAX_STDIN_BYTES = 10 * 1024 * 1024

/** The sessions subcommands, so `keel list` is refused with `keel sessions list` suggested. */
const SESSION_WORDS = ['list', 'show', 'export', 'unlock']

/**
 * The typo rule: without `-p`, a task that is one lone word (no space, not after `--`) and
 * looks like a mistyped command (`keel frob` → fork, see {@link closest}) or is a sessions
 * subcommand (`keel list`) is refused with a suggestion instead of being sent to the model.
 */
function refuseTypo(argv: readonly string[], positionals: readonly string[]): void {
  if (positionals.length !== 1 || argv.includes('--')) return
  const word = positionals[0]!
  if (!/^[A-Za-z][\w-]{0,30}$/u.test(word)) return
  const lower = word.toLowerCase()
  const suggestion = SESSION_WORDS.includes(lower)
    ? `keel sessions ${lower}`
    : (() => {
        const near = closest(lower, COMMANDS)
        return near ? `keel ${near}` : undefined
      })()
  if (suggestion === undefined) return
  throw new UsageError(
    `${JSON.stringify(word)} is not a command; did you mean ${suggestion}? To give the word to the model as a task: keel -- ${word}`,
  )
}

/** Commands that may follow the flags (`keel --store postgres sessions list`). */
const MOVABLE = new Set(['sessions', 'presets', 'mcp', 'resume', 'fork', 'demo'])

/**
 * The command line with its command first, when flags come before it: `keel --store
 * postgres sessions list` is `keel sessions list --store postgres`, not a task of two words
 * for the model: the flags move after the command's words (and before a `--` of its own),
 * where the command checks them as its own. Undefined when the line starts
 * with its command or its first word is no command; words after `--` are always the task.
 */
export function commandAfterFlags(argv: readonly string[]): string[] | undefined {
  if (argv.length === 0 || !argv[0]!.startsWith('-')) return undefined
  // not strict: an unknown flag is for the agent's own check to name, after this
  const { tokens } = parseArgs({ args: [...argv], options: agentOptions, strict: false, tokens: true })
  const first = tokens.find((t) => t.kind === 'positional' || t.kind === 'option-terminator')
  if (first?.kind !== 'positional' || !MOVABLE.has(first.value)) return undefined
  // the flags go after the command's own words (`sessions list`), before a `--` of its own
  const flags = argv.slice(0, first.index)
  const rest = argv.slice(first.index + 1)
  const end = rest.includes('--') ? rest.indexOf('--') : rest.length
  return [first.value, ...rest.slice(0, end), ...flags, ...rest.slice(end)]
}

/**
 * `keel [task]`, `keel resume …`, `keel fork …`: checks the whole command line first — flags,
 * the task, `--cwd`, the Keel home, the endpoint, the store — so bad input is one line and
 * nothing is opened or written; then opens the session and runs (`agent-run.ts`, loaded only
 * then). Returns the exit code.
 */
export async function runAgentCommand(given: Mode, argv: readonly string[], io: CliIo): Promise<number> {
  const label = given === 'new' ? 'keel' : `keel ${given}`
  const { values, positionals } = parseFlags(label, argv, agentOptions)
  if (values.help) {
    io.out(`${USAGE}\n`)
    return EXIT.ok
  }
  // ── check everything the command line says before anything is opened or written ──
  let mode = given
  let last = values.last === true
  if (values.continue) {
    if (given !== 'new') throw new UsageError(`-c/--continue is keel's own short form of keel resume --last`)
    mode = 'resume'
    last = true
  }
  if (mode === 'new' && last) throw new UsageError('--last belongs to keel resume (or use keel -c)')
  if (mode !== 'fork' && values.at !== undefined) throw new UsageError('--at belongs to keel fork')
  const output = (values.output ?? 'text') as Output
  if (!['text', 'json', 'stream-json'].includes(output))
    throw new UsageError(`--output must be text, json or stream-json, got ${JSON.stringify(values.output)}`)
  if (values.output !== undefined && !values.print) throw new UsageError('--output needs -p (print mode)')
  if (values['include-partial-messages'] && output !== 'stream-json')
    throw new UsageError('--include-partial-messages needs -p --output stream-json')
  const inputFormat = (values['input-format'] ?? 'text') as InputFormat
  if (!['text', 'stream-json'].includes(inputFormat))
    throw new UsageError(
      `--input-format must be text or stream-json, got ${JSON.stringify(values['input-format'])}`,
    )
  if (inputFormat === 'stream-json' && output !== 'stream-json')
    throw new UsageError('--input-format stream-json needs -p --output stream-json')
  let atSeq: number | undefined
  if (values.at !== undefined) {
    atSeq = /^\d+$/u.test(values.at) ? Number(values.at) : Number.NaN
    if (!Number.isSafeInteger(atSeq))
      throw new UsageError(`--at must be a seq (a non-negative integer), got ${JSON.stringify(values.at)}`)
  }
  let rest = positionals
  let id: string | undefined
  if (mode === 'fork' || (mode === 'resume' && !last)) {
    id = positionals[0]
    rest = positionals.slice(1)
    if (id === undefined)
      throw new UsageError(
        mode === 'fork'
          ? 'keel fork needs a session id: keel fork <id> [--at seq] ["task"]'
          : 'keel resume needs a session id, or --last: keel resume <id> ["task"]',
      )
  }
  if (inputFormat === 'stream-json' && rest.length > 0)
    throw new UsageError(
      '--input-format stream-json reads the messages from stdin, one JSON line each; give no task',
    )
  if (inputFormat === 'stream-json' && !io.stdin)
    throw new UsageError(
      '--input-format stream-json reads JSON lines from a pipe, not a terminal (driver | keel -p --input-format stream-json --output stream-json)',
    )
  if (mode === 'new' && !values.print) refuseTypo(argv, positionals)
  const invocation = resolve(io.cwd ?? process.cwd())
  const explicit = values.cwd === undefined ? undefined : resolve(invocation, values.cwd)
  if (explicit !== undefined) await checkDirectory(explicit, '--cwd')
  const llm = await selectLlm(
    { baseUrl: values['base-url'], model: values.model, idleTimeout: values['idle-timeout'] },
    io.env,
  )
  const selected = await selectStore(values.store, io.env)
  const home = keelHome(io.env as NodeJS.ProcessEnv)
  let task: string | undefined
  try {
    await checkKeelHome(home, io.env, selected.kind === 'jsonl' ? 'write' : 'read')
    // With --input-format stream-json, stdin is the messages (read as the run goes).
    task = inputFormat === 'stream-json' ? undefined : await taskOf(rest, io)
    if (task !== undefined && task.trim() === '')
      throw new UsageError('the task is empty: say what to do, e.g. keel -p "list the failing tests"')
    if (values.print && task === undefined && inputFormat === 'text')
      throw new UsageError(
        '-p needs a task: keel -p "what to do", or pipe it in (echo "what to do" | keel -p)',
      )
    if (task === undefined && inputFormat === 'text' && !io.terminal)
      throw new UsageError(
        'interactive keel needs a terminal; give a task (keel "task", or keel -p "task" for scripts)',
      )
  } catch (error) {
    await selected.store.close()
    throw error
  }
  const { openAndRun } = await import('./agent-run.js')
  return openAndRun({
    io,
    mode,
    values,
    output,
    task,
    inputFormat,
    interactive: task === undefined && inputFormat === 'text',
    llm,
    selected,
    home,
    invocation,
    explicit,
    last,
    id,
    atSeq,
  })
}

/** Piped stdin as the task, or put before the typed task as context (as `claude -p` does). */
async function taskOf(words: readonly string[], io: CliIo): Promise<string | undefined> {
  const typed = words.length > 0 ? words.join(' ') : undefined
  const piped = io.readStdin ? await io.readStdin() : ''
  if (Buffer.byteLength(piped) > MAX_STDIN_BYTES)
    throw new UsageError(`the text piped into stdin is over ${MAX_STDIN_BYTES / 1024 / 1024} MiB`)
  if (piped.trim() === '') return typed
  return typed === undefined ? piped.trim() : `${piped.trimEnd()}\n\n${typed}`
}
