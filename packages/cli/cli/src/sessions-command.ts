import { resolve } from 'node:path'
import { titleOfEvents } from '@keel/session-title'
import type { SessionStore, SessionSummary, StoreNotice } from '@keel/store'
import { keelHome } from '@keel/store-jsonl'
import { describeEvent } from './describe-event.js'
import { exportSession } from './export-command.js'
import type { CliIo } from './io.js'
import { oneLine } from './render.js'
import { withSessionId } from './session-id.js'
import { firstPromptTitle, latestTitle } from './session-titles.js'
import { childOfLine, delegationLabel, nestSessions } from './session-tree.js'
import { checkKeelHome, selectStore, unlockSession } from './store.js'
import { closest, parseFlags, UsageError } from './usage.js'
import { verifySession } from './verify-command.js'

const SUBCOMMANDS = ['list', 'show', 'export', 'verify', 'unlock'] as const

/** `keel sessions list|show|export|verify|unlock …`. */
export async function sessionsCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv
  const home = keelHome(io.env as NodeJS.ProcessEnv)
  if (sub === 'list') return listSessions(rest, io, home)
  if (sub === 'show') return showSession(rest, io, home)
  if (sub === 'export') {
    await checkKeelHome(home, io.env, 'read')
    return exportSession(rest, io)
  }
  if (sub === 'verify') {
    await checkKeelHome(home, io.env, 'read')
    return verifySession(rest, io)
  }
  if (sub === 'unlock') {
    await checkKeelHome(home, io.env, 'read')
    return unlockSession(rest, io)
  }
  const near = sub === undefined ? undefined : closest(sub, SUBCOMMANDS)
  throw new UsageError(
    sub === undefined
      ? 'keel sessions needs a subcommand: list, show, export, verify or unlock'
      : `keel sessions ${sub} is not a command${near ? `; did you mean keel sessions ${near}?` : ''}; keel sessions takes list, show, export, verify or unlock`,
  )
}

/** Local `YYYY-MM-DD HH:MM`. */
function when(ms: number): string {
  const d = new Date(ms)
  const two = (n: number) => String(n).padStart(2, '0')
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}`
}

/**
 * The title a list shows: the latest `session/title` (a person's wins), the header's, what
 * a fork was forked from, the subagent a child runs, else the first prompt.
 */
async function titleOf(
  store: SessionStore,
  s: SessionSummary,
  byId: ReadonlyMap<string, SessionSummary>,
  nested: boolean,
): Promise<string> {
  const named = (await latestTitle(store, s.id)) ?? (s.title === '' ? undefined : s.title)
  if (s.delegatedBy) return `${delegationLabel(s.delegatedBy, !nested)}${named ? `: ${named}` : ''}`
  if (named !== undefined) return named
  if (s.parentSession !== undefined) {
    const parent = byId.get(s.parentSession)?.title
    return `fork of ${parent ? JSON.stringify(oneLine(parent, 40)) : s.parentSession}`
  }
  return (await firstPromptTitle(store, s.id)) ?? '(no prompt yet)'
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
    // a session that cannot be read is named on stderr (even with --json), never hidden
    const onNotice = (notice: StoreNotice) => io.err(`keel: ${notice.message}\n`)
    const sessions = await store.list({ limit, orderBy: 'activity', onNotice, ...(cwd ? { cwd } : {}) })
    if (values.json) {
      io.out(`${JSON.stringify(sessions, null, 2)}\n`)
      return 0
    }
    if (sessions.length === 0) {
      io.out(`no sessions${cwd ? ` in ${cwd}` : ''} (${where})\n`)
      return 0
    }
    const byId = new Map(sessions.map((s) => [s.id, s]))
    // subagent sessions under the session that started them
    const rows: string[][] = []
    for (const { summary: s, depth } of nestSessions(sessions)) {
      rows.push([
        `${depth > 0 ? `${'  '.repeat(depth - 1)}└ ` : ''}${s.id}`,
        when(s.lastActivityAt),
        s.eventCount === undefined ? '' : String(s.eventCount),
        oneLine(await titleOf(store, s, byId, depth > 0), 60),
        s.cwd ?? '',
      ])
    }
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
    const inspection = await withSessionId(store, id, (typed) => store.inspect(typed))
    if (values.json) {
      io.out(`${JSON.stringify(inspection, null, 2)}\n`)
      return 0
    }
    const h = inspection.header
    const title = titleOfEvents(inspection.events) ?? h.title
    io.out(`session ${h.id}${title ? ` — ${title}` : ''}\n`)
    io.out(`  created ${new Date(h.createdAt).toISOString()}${h.cwd ? `  cwd ${h.cwd}` : ''}\n`)
    if (h.parentSession) io.out(`  forked from ${h.parentSession} (${h.seedLength} events inherited)\n`)
    const childOf = childOfLine(h)
    if (childOf) io.out(`${childOf}\n`)
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
