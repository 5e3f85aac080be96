import { parseArgs } from 'node:util'
import { isKeelError } from '@keel/base'
import type { SessionEvent } from '@keel/session'
import { exportSession } from './export-command.js'
import { UsageError } from './llm.js'
import { presetsCommand } from './presets-command.js'
import { oneLine, summarizeArguments, summarizeResult } from './render.js'
import { runAgentCommand } from './run.js'
import { runDemo } from './run-demo.js'
import { selectStore, unlockSession } from './store.js'
import { verifySession } from './verify-command.js'

/** Where a command reads its environment and writes its output. */
export interface CliIo {
  env: Readonly<Record<string, string | undefined>>
  out(text: string): void
  err(text: string): void
  /** Style the output with ANSI escapes. */
  color?: boolean
  /** The first Ctrl-C (SIGINT) of a non-interactive run: aborts the running turn. */
  signal?: AbortSignal
  /** The working directory (default `process.cwd()`). */
  cwd?: string
  /** Present when stdin and stdout are a terminal: interactive `keel` and approval prompts use it. */
  terminal?: Terminal
}

/** The terminal of an interactive run. */
export interface Terminal {
  stdin: NodeJS.ReadStream
  stdout: NodeJS.WriteStream
  stderr: NodeJS.WriteStream
}

/** Exit codes of `keel` (documented in the README). */
export const EXIT = { ok: 0, runtime: 1, usage: 2, interrupted: 130 } as const

const usage = `usage: keel [flags] ["task"]          interactive, or one-shot with a task
       keel -p "task" [--output text|json|stream-json]   for scripts (stdout: only the answer / JSON)
       keel resume <id>|--last ["task"]  continue a session with its recorded preset
       keel fork <id> [--at seq] ["task"]  a new session from a prefix of another
       keel sessions list [--cwd dir] [--limit n] [--store s]
       keel sessions show <id> [--json] [--store s]
       keel sessions export <id> --html [-o file] [--store s]
       keel sessions verify <id> [--json] [--store s]  replay it all and compare with its checkpoint
       keel sessions unlock <id>          remove a stale writer lock (JSONL; e.g. one held on another host)
       keel presets list | keel presets show <id>
       keel demo [--live "task"]         the scripted demo (no key, no network)

flags: --preset id (default coding)  --model id  --base-url url  --store jsonl|postgres  --cwd dir
env:   DEEPSEEK_API_KEY (needed unless --base-url), DEEPSEEK_BASE_URL, KEEL_HOME (default ~/.keel),
       KEEL_STORE, KEEL_PG_URL
exit:  0 ok, 1 runtime or API error, 2 usage or configuration (incl. a missing key), 130 interrupted`

/** One line describing an event, for `keel sessions show`. */
export function describeEvent(event: SessionEvent): string {
  switch (event.type) {
    case 'turn/start':
      return `turn ${event.data.turn}`
    case 'turn/end':
      return `turn ${event.data.turn} ${event.data.reason}${event.data.error ? ` ${event.data.error.code}: ${oneLine(event.data.error.message, 80)}` : ''}`
    case 'step/start':
    case 'step/end':
      return `turn ${event.data.turn} step ${event.data.step}`
    case 'system/message':
    case 'developer/message':
    case 'user/message': {
      const text = event.data.message.content.map((b) => (b.type === 'text' ? b.text : '[image]')).join(' ')
      return oneLine(text, 100)
    }
    case 'assistant/message': {
      const blocks = event.data.message.content
      const text = blocks.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('')
      const calls = blocks.filter((b) => b.type === 'tool-call').length
      const usage = event.data.usage
        ? ` · ${event.data.usage.inputTokens} in / ${event.data.usage.outputTokens} out`
        : ''
      const extra = [
        calls > 0 ? `${calls} tool call${calls === 1 ? '' : 's'}` : '',
        blocks.some((b) => b.type === 'reasoning') ? 'reasoning' : '',
        event.data.interrupted ? 'INTERRUPTED' : '',
      ].filter((s) => s !== '')
      return `${oneLine(text, 80) || '(no text)'}${extra.length > 0 ? ` [${extra.join(', ')}]` : ''}${usage}`
    }
    case 'assistant/attempt':
      return `attempt ${event.data.attempt} failed: ${event.data.error.code}`
    case 'tool/call':
      return `${event.data.name} ${summarizeArguments(event.data.arguments, 80)}`
    case 'tool/result':
      return `${event.data.message.toolName} ${event.data.errorCode ? `✗ ${event.data.errorCode}` : '✓'} ${summarizeResult(event.data.message, 70)}`
    default:
      return oneLine(JSON.stringify(event.data), 100)
  }
}

/** Runs one `keel` command line; returns the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [command, sub, ...rest] = argv
  try {
    if (command === 'demo') {
      const outcome = await runDemo({
        argv: argv.slice(1),
        env: io.env,
        out: { write: io.out, color: io.color === true },
        err: io.err,
        ...(io.signal ? { signal: io.signal } : {}),
        ...(io.terminal ? { terminal: io.terminal } : {}),
      })
      return outcome.exitCode
    }
    if (command === 'help' || command === '--help' || command === '-h') {
      io.out(`${usage}\n`)
      return EXIT.ok
    }
    if (command === 'sessions' && sub === 'list') return await listSessions(rest, io)
    if (command === 'sessions' && sub === 'show') return await showSession(rest, io)
    if (command === 'sessions' && sub === 'unlock') return await unlockSession(rest, io)
    if (command === 'sessions' && sub === 'export') return await exportSession(rest, io)
    if (command === 'sessions' && sub === 'verify') return await verifySession(rest, io)
    if (command === 'presets') return await presetsCommand(argv.slice(1), io)
    if (command === 'sessions') throw new UsageError(`unknown command: keel ${argv.join(' ')}`)
    if (command === 'resume') return await runAgentCommand('resume', argv.slice(1), io)
    if (command === 'fork') return await runAgentCommand('fork', argv.slice(1), io)
    return await runAgentCommand('new', argv, io)
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(error.showUsage ? `keel: ${error.message}\n\n${usage}\n` : `keel: ${error.message}\n`)
      return EXIT.usage
    }
    const code = isKeelError(error) ? error.code : undefined
    io.err(`keel: ${code ? `${code}: ` : ''}${error instanceof Error ? error.message : String(error)}\n`)
    return code !== undefined && usageCodes.test(code) ? EXIT.usage : EXIT.runtime
  }
}

/** Typed errors that mean the command line or a configuration file must change. */
const usageCodes =
  /^(PRESET_|COMPOSITION_UNAVAILABLE$|SESSION_NOT_FOUND$|STORE_KIND_INVALID$|FORK_CUT_INVALID$)/

async function listSessions(argv: readonly string[], io: CliIo): Promise<number> {
  const { values } = parseArgs({
    args: [...argv],
    options: { cwd: { type: 'string' }, limit: { type: 'string' }, store: { type: 'string' } },
    strict: true,
  })
  const limit = values.limit === undefined ? 50 : Number(values.limit)
  if (!Number.isInteger(limit) || limit < 1) {
    io.err(`--limit must be a positive integer, got ${values.limit}\n`)
    return 2
  }
  const { store, where } = selectStore(values.store, io.env)
  try {
    const sessions = await store.list({ limit, ...(values.cwd ? { cwd: values.cwd } : {}) })
    if (sessions.length === 0) {
      io.out(`no sessions in ${where}\n`)
      return 0
    }
    for (const s of sessions) {
      const when = new Date(s.createdAt).toISOString().replace('T', ' ').slice(0, 19)
      const parts = [
        s.id,
        when,
        s.title ?? '',
        s.cwd ?? '',
        s.eventCount === undefined ? '' : `${s.eventCount} events`,
      ]
      io.out(`${parts.filter((p) => p !== '').join('  ')}\n`)
    }
    return 0
  } finally {
    await store.close()
  }
}

async function showSession(argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: { json: { type: 'boolean' }, store: { type: 'string' } },
    allowPositionals: true,
    strict: true,
  })
  const id = positionals[0]
  if (id === undefined || positionals.length > 1) {
    io.err('usage: keel sessions show <id> [--json] [--store jsonl|postgres]\n')
    return 2
  }
  const { store, logOf } = selectStore(values.store, io.env)
  try {
    const inspection = await store.inspect(id)
    if (values.json) {
      io.out(`${JSON.stringify(inspection, null, 2)}\n`)
      return 0
    }
    const h = inspection.header
    io.out(`session ${h.id}${h.title ? ` — ${h.title}` : ''}\n`)
    io.out(`  created ${new Date(h.createdAt).toISOString()}${h.cwd ? `  cwd ${h.cwd}` : ''}\n`)
    if (h.parentSession) io.out(`  forked from ${h.parentSession} (${h.seedLength} events inherited)\n`)
    io.out(`  log     ${logOf(h.id)}\n`)
    for (const notice of inspection.notices) io.out(`  notice  ${notice.code}: ${notice.message}\n`)
    io.out('\n')
    const width = String(Math.max(0, inspection.events.length - 1)).length
    for (const event of inspection.events) {
      io.out(`${String(event.seq).padStart(width)}  ${event.type.padEnd(18)} ${describeEvent(event)}\n`)
    }
    return 0
  } finally {
    await store.close()
  }
}
