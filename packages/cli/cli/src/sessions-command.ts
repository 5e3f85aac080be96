import { resolve } from 'node:path'
import type { SessionEvent } from '@keel/session'
import type { SessionSummary } from '@keel/store'
import { keelHome } from '@keel/store-jsonl'
import type { CliIo } from './commands.js'
import { exportSession } from './export-command.js'
import { oneLine, summarizeArguments, summarizeResult } from './render.js'
import { checkKeelHome, selectStore, unlockSession } from './store.js'
import { closest, parseFlags, UsageError } from './usage.js'

const SUBCOMMANDS = ['list', 'show', 'export', 'unlock'] as const

/** `keel sessions list|show|export|unlock …`. */
export async function sessionsCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv
  const home = keelHome(io.env as NodeJS.ProcessEnv)
  if (sub === 'list') return listSessions(rest, io, home)
  if (sub === 'show') return showSession(rest, io, home)
  if (sub === 'export') {
    await checkKeelHome(home, io.env, 'read')
    return exportSession(rest, io)
  }
  if (sub === 'unlock') {
    await checkKeelHome(home, io.env, 'read')
    return unlockSession(rest, io)
  }
  const near = sub === undefined ? undefined : closest(sub, SUBCOMMANDS)
  throw new UsageError(
    sub === undefined
      ? 'keel sessions needs a subcommand: list, show, export or unlock'
      : `keel sessions ${sub} is not a command${near ? `; did you mean keel sessions ${near}?` : ''}; keel sessions takes list, show, export or unlock`,
  )
}

/** Local `YYYY-MM-DD HH:MM`. */
function when(ms: number): string {
  const d = new Date(ms)
  const two = (n: number) => String(n).padStart(2, '0')
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`
}

/** The title a list shows: the session's own, or what it was forked from. */
function titleOf(s: SessionSummary, byId: ReadonlyMap<string, SessionSummary>): string {
  if (s.title !== undefined && s.title !== '') return s.title
  if (s.parentSession !== undefined) {
    const parent = byId.get(s.parentSession)?.title
    return `fork of ${parent ? JSON.stringify(oneLine(parent, 40)) : s.parentSession}`
  }
  return '(no prompt yet)'
}

async function listSessions(argv: readonly string[], io: CliIo, home: string): Promise<number> {
  const { values } = parseFlags(
    'keel sessions list',
    argv,
    {
      cwd: { type: 'string' },
      limit: { type: 'string' },
      store: { type: 'string' },
      json: { type: 'boolean' },
    },
    false,
  )
  const limit = values.limit === undefined ? 50 : Number(values.limit)
  if (!Number.isInteger(limit) || limit < 1)
    throw new UsageError(`keel sessions list: --limit must be a positive integer, got ${values.limit}`)
  const { store, where, kind } = selectStore(values.store, io.env)
  try {
    if (kind === 'jsonl') await checkKeelHome(home, io.env, 'read')
    const cwd = values.cwd === undefined ? undefined : resolve(io.cwd ?? process.cwd(), values.cwd)
    const sessions = await store.list({ limit, orderBy: 'activity', ...(cwd ? { cwd } : {}) })
    if (values.json) {
      io.out(`${JSON.stringify(sessions, null, 2)}\n`)
      return 0
    }
    if (sessions.length === 0) {
      io.out(`no sessions${cwd ? ` in ${cwd}` : ''} (${where})\n`)
      return 0
    }
    const byId = new Map(sessions.map((s) => [s.id, s]))
    const rows = sessions.map((s) => [
      s.id,
      when(s.lastActivityAt),
      s.eventCount === undefined ? '' : String(s.eventCount),
      oneLine(titleOf(s, byId), 50),
      s.cwd ?? '',
    ])
    const head = ['ID', 'LAST ACTIVITY', 'EVENTS', 'TITLE', 'DIRECTORY']
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
    const line = (cells: string[]) =>
      cells
        .map((c, i) => (i === 2 ? c.padStart(widths[i]!) : i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
        .join('  ')
    io.out(`${line(head)}\n`)
    for (const row of rows) io.out(`${line(row)}\n`)
    return 0
  } finally {
    await store.close()
  }
}

async function showSession(argv: readonly string[], io: CliIo, home: string): Promise<number> {
  const { values, positionals } = parseFlags('keel sessions show', argv, {
    json: { type: 'boolean' },
    store: { type: 'string' },
  })
  const id = positionals[0]
  if (id === undefined || positionals.length > 1)
    throw new UsageError('keel sessions show needs one session id: keel sessions show <id> [--json]')
  const { store, logOf, kind } = selectStore(values.store, io.env)
  try {
    if (kind === 'jsonl') await checkKeelHome(home, io.env, 'read')
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
    case 'agent/inbox/spliced': {
      const d = event.data
      const added = d.inserted.map((m) =>
        oneLine(m.content.map((b) => (b.type === 'text' ? b.text : '')).join(''), 40),
      )
      const removed = d.removedCount
        ? `${d.outcome === 'canceled' ? 'withdrew' : 'took'} ${d.removedCount} at ${d.start}`
        : ''
      return [removed, added.length > 0 ? `queued ${added.map((a) => JSON.stringify(a)).join(', ')}` : '']
        .filter((s) => s !== '')
        .join('; ')
    }
    default:
      return oneLine(JSON.stringify(event.data), 100)
  }
}
