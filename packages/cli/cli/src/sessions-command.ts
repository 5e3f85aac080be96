import { resolve } from 'node:path'
import type { SessionSummary } from '@keel/store'
import { keelHome } from '@keel/store-jsonl'
import type { CliIo } from './commands.js'
import { describeEvent } from './describe-event.js'
import { exportSession } from './export-command.js'
import { oneLine } from './render.js'
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
  const { store, where, kind } = await selectStore(values.store, io.env)
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
  const { store, logOf, kind } = await selectStore(values.store, io.env)
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
