import { resolve } from 'node:path'
import type { AgentObserver, StoreHandle } from '@keel/agent'
import {
  createPresetAgent,
  findPreset,
  type PresetAgent,
  type PresetSource,
  resolveComposition,
} from '@keel/presets'
import { keelHome } from '@keel/store-jsonl'
import { createTerminalAnswerer } from '@keel/user-approval'
import type { CliIo } from './commands.js'
import { DeferredSession } from './deferred-session.js'
import { EXIT } from './exit-codes.js'
import { createJsonLines, OUTPUT_CAPABILITIES } from './json-output.js'
import { selectLlm } from './llm.js'
import { type Output, printModeNotices, runOneShot } from './one-shot.js'
import { checkDirectory, openExisting, type SessionChoice } from './open-session.js'
import { loadReportedPresets } from './preset-report.js'
import { createRenderer } from './render.js'
import { checkKeelHome, type SelectedStore, selectStore } from './store.js'
import { COMMANDS, closest, type ParsedFlags, parseFlags, USAGE, UsageError } from './usage.js'

/** The system prompt of `keel` sessions (a preset may add to it). */
export const KEEL_SYSTEM_PROMPT =
  "You are Keel, a careful coding agent working in the user's workspace. Read before you edit, make the smallest change that does the job, check it (run the tests), and answer briefly."

/** Flags shared by `keel [task]`, `keel resume` and `keel fork`. */
export const agentOptions = {
  preset: { type: 'string' },
  model: { type: 'string' },
  'base-url': { type: 'string' },
  store: { type: 'string' },
  cwd: { type: 'string' },
  print: { type: 'boolean', short: 'p' },
  output: { type: 'string' },
  last: { type: 'boolean' },
  continue: { type: 'boolean', short: 'c' },
  at: { type: 'string' },
  'idle-timeout': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

type Mode = 'new' | 'resume' | 'fork'

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

/** `keel [task]`, `keel resume …`, `keel fork …`: returns the exit code. */
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
  if (mode === 'new' && !values.print) refuseTypo(argv, positionals)
  const invocation = resolve(io.cwd ?? process.cwd())
  const explicit = values.cwd === undefined ? undefined : resolve(invocation, values.cwd)
  if (explicit !== undefined) await checkDirectory(explicit, '--cwd')
  const llm = selectLlm(
    { baseUrl: values['base-url'], model: values.model, idleTimeout: values['idle-timeout'] },
    io.env,
  )
  const selected = selectStore(values.store, io.env)
  const home = keelHome(io.env as NodeJS.ProcessEnv)
  let task: string | undefined
  try {
    await checkKeelHome(home, io.env, selected.kind === 'jsonl' ? 'write' : 'read')
    task = await taskOf(rest, io)
    if (task !== undefined && task.trim() === '')
      throw new UsageError('the task is empty: say what to do, e.g. keel -p "list the failing tests"')
    if (values.print && task === undefined)
      throw new UsageError(
        '-p needs a task: keel -p "what to do", or pipe it in (echo "what to do" | keel -p)',
      )
    if (task === undefined && !io.terminal)
      throw new UsageError(
        'interactive keel needs a terminal; give a task (keel "task", or keel -p "task" for scripts)',
      )
  } catch (error) {
    await selected.store.close()
    throw error
  }
  const interactive = task === undefined
  // ── open the session ──
  let handle: StoreHandle
  let deferred: DeferredSession | undefined
  let cwd: string
  let notes: string[] = []
  let presets: PresetSource[]
  try {
    if (mode === 'new') {
      cwd = explicit ?? invocation
      presets = await loadReportedPresets(home, cwd, io, values.preset)
      const chosen = findPreset(presets, values.preset ?? 'coding')
      const composition = resolveComposition(chosen.preset, {
        source: chosen.source,
        ...(values.model === undefined ? {} : { model: values.model }),
      })
      deferred = new DeferredSession(
        selected.store,
        { cwd, agentPreset: composition.preset, agentComposition: composition },
        selected.directoryOf,
      )
      handle = deferred
    } else {
      const choice: SessionChoice =
        mode === 'fork'
          ? { kind: 'fork', id: id!, ...(atSeq === undefined ? {} : { atSeq }) }
          : last
            ? { kind: 'last', dir: explicit ?? invocation }
            : { kind: 'resume', id: id! }
      const opened = await openExisting(choice, selected, {
        invocation,
        ...(explicit === undefined ? {} : { explicit }),
      })
      ;({ handle, cwd, notes } = opened)
      try {
        presets = await loadReportedPresets(home, cwd, io, values.preset)
      } catch (error) {
        await handle.close()
        throw error
      }
    }
  } catch (error) {
    await selected.store.close()
    throw error
  }
  return runWith({
    io,
    mode,
    values,
    output,
    task,
    interactive,
    llm,
    selected,
    handle,
    deferred,
    cwd,
    notes,
    presets,
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

function describeComposition(built: PresetAgent, mode: Mode): string {
  const plugins = built.composition.plugins.map((p) => `${p.name}@${p.version}`).join(', ') || 'no plugins'
  const verb =
    built.origin === 'switched'
      ? 'switched to preset'
      : mode !== 'new'
        ? 'rebuilt the recorded preset'
        : 'preset'
  return `${verb} ${built.composition.preset}: ${plugins}; tools ${built.composition.tools.join(', ') || 'none'}`
}

interface Setup {
  io: CliIo
  mode: Mode
  values: ParsedFlags<typeof agentOptions>['values']
  output: Output
  task: string | undefined
  interactive: boolean
  llm: ReturnType<typeof selectLlm>
  selected: SelectedStore
  handle: StoreHandle
  deferred: DeferredSession | undefined
  cwd: string
  notes: string[]
  presets: PresetSource[]
}

async function runWith(s: Setup): Promise<number> {
  const { io, values, output } = s
  const print = values.print === true
  const stream = print && output === 'stream-json'
  const observers: AgentObserver[] = []
  const renderer =
    !print && !s.interactive ? createRenderer({ write: io.out, color: io.color === true }) : undefined
  if (renderer) observers.push(renderer)
  const lines = stream ? createJsonLines(io.out) : undefined
  if (lines) observers.push(lines.observer)
  if (print) observers.push(printModeNotices(io, output))
  const feed = s.interactive ? new (await import('./tui/feed.js')).Feed() : undefined
  if (feed) observers.push(feed.observer)
  // One-shot on a terminal asks the person at the terminal; print mode never asks (fails closed).
  const answerers = feed
    ? [feed.answerer]
    : !print && io.terminal
      ? [createTerminalAnswerer({ input: io.terminal.stdin, output: io.terminal.stderr })]
      : []
  let built: PresetAgent
  try {
    built = await createPresetAgent({
      llm: s.llm,
      cwd: s.cwd,
      presets: s.presets,
      systemPrompt: KEEL_SYSTEM_PROMPT,
      observers,
      answerers,
      session: s.handle,
      ...(values.preset !== undefined
        ? { preset: values.preset }
        : s.mode === 'new'
          ? { preset: 'coding' }
          : {}),
      ...(values.model === undefined ? {} : { model: values.model }),
      logger: (entry) => io.err(`keel: ${entry.code}: ${entry.message}\n`),
    })
  } catch (error) {
    await s.handle.close().catch(() => undefined)
    await s.selected.store.close()
    throw error
  }
  const agent = built.agent
  const header = [...s.notes, describeComposition(built, s.mode), ...built.notices.map((n) => `note: ${n}`)]
  if (!feed) for (const line of header) io.err(`keel: ${line}\n`)
  lines?.open(agent.session.id, {
    cwd: s.cwd,
    model: s.llm.model,
    preset: built.composition.preset,
    composition: built.composition,
    tools: agent.tools.map((t) => t.name),
    capabilities: OUTPUT_CAPABILITIES,
  })
  const closeStore = () => s.selected.store.close()
  if (s.interactive) {
    const { runInteractive } = await (await import('./tui/load.js')).loadInteractiveUi()
    try {
      return await runInteractive({
        agent,
        built,
        feed: feed!,
        terminal: io.terminal!,
        header: [`session ${agent.session.id} · ${s.llm.model}`, ...header],
        resumed: s.mode !== 'new',
        ...(io.signal ? { signal: io.signal } : {}),
        ...(s.deferred ? { deferred: s.deferred } : {}),
      })
    } finally {
      await agent.close().catch((error: unknown) => io.err(`keel: ${(error as Error).message}\n`))
      await closeStore()
    }
  }
  return runOneShot({
    agent,
    io,
    task: s.task!,
    print: print ? output : undefined,
    started: Date.now(),
    ...(renderer ? { finish: () => renderer.finish() } : {}),
    ...(s.deferred ? { deferred: s.deferred } : {}),
    closeStore,
  })
}
