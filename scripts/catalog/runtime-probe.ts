// Child process of verify and of `gen --snapshot`: imports the packages of a repository —
// running their code, as a session's host would — then prints the migration steps that ended
// up in the session module's SESSION_MIGRATIONS registry, and loads each golden log given
// through the chain with today's validators (as a store loads an old log). A
// `registerMigration` in a file nothing imports does not count.
// argv: <job.json>  { session, entries: [...], goldens: [{ version, path }] }
// stdout: { steps: [{ from, to, owner }], goldens: [{ version, problems: [...] }] }
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'

interface Job {
  session: string
  entries: string[]
  goldens: Array<{ version: number; path: string; label: string }>
}
interface SessionModule {
  SESSION_MIGRATIONS?: ReadonlyMap<number, unknown>
  SESSION_FORMAT_VERSION?: number
  migrateEvent?: (event: unknown, from: number, to: number) => unknown[]
  Session?: {
    create(
      id: string,
      header: object,
      seed: unknown[],
    ): { events: ReadonlyArray<{ seq: number; type: string }>; isOpaque(seq: number): boolean }
  }
}

const fail = (message: string, code: number): never => {
  process.stderr.write(`${message}\n`)
  process.exit(code)
}
const why = (e: unknown) => {
  const err = e as { code?: unknown; message?: unknown }
  return `${typeof err.code === 'string' ? `${err.code}: ` : ''}${String(err.message ?? e)}`.split('\n')[0]!
}

const jobFile = process.argv[2] ?? fail('usage: runtime-probe <job.json>', 2)
const job = JSON.parse(readFileSync(jobFile, 'utf8')) as Job
for (const entry of job.entries) await import(pathToFileURL(entry).href)
const session = (await import(pathToFileURL(job.session).href)) as SessionModule
const registry = session.SESSION_MIGRATIONS
if (!(registry instanceof Map)) fail('the session module exports no SESSION_MIGRATIONS registry (a Map)', 3)
const steps = [...registry!.values()]
  .flatMap((v) => (Array.isArray(v) ? v : [v]) as Array<{ from: number; to: number; owner?: string }>)
  .map((m) => ({ from: m.from, to: m.to, owner: m.owner ?? '' }))
  .sort((a, b) => a.from - b.from || (a.owner < b.owner ? -1 : 1))

const goldens = job.goldens.map(({ version, path, label }) => {
  const problems: string[] = []
  const { Session, migrateEvent, SESSION_FORMAT_VERSION: current } = session
  if (!Session || !migrateEvent || current === undefined) {
    problems.push(
      'the session module exports no Session, migrateEvent and SESSION_FORMAT_VERSION to load it with',
    )
    return { version, problems }
  }
  const [headerLine, ...lines] = readFileSync(path, 'utf8').trimEnd().split('\n')
  let header: { id: string } & Record<string, unknown>
  let stored: unknown[]
  try {
    header = JSON.parse(headerLine!)
    stored = lines.map((l) => JSON.parse(l))
  } catch (e) {
    problems.push(`${label} is not JSON lines: ${why(e)}`)
    return { version, problems }
  }
  let events: unknown[]
  try {
    events = stored
      .flatMap((e) => migrateEvent(e, version, current))
      .map((e, seq) => ({ ...(e as object), seq }))
  } catch (e) {
    problems.push(`${label} does not upgrade from format ${version} to ${current}: ${why(e)}`)
    return { version, problems }
  }
  try {
    const loaded = Session.create(header.id, { ...header, version: current }, events)
    const opaque = loaded.events.filter((e) => loaded.isOpaque(e.seq)).map((e) => e.type)
    if (opaque.length > 0)
      problems.push(
        `${label}: ${[...new Set(opaque)].join(', ')} not interpreted: no loaded package registers a validator for them`,
      )
  } catch (e) {
    problems.push(
      `${label}${version < current ? `, upgraded from format ${version} to ${current},` : ''} does not load with today's types: ${why(e)}`,
    )
  }
  return { version, problems }
})
process.stdout.write(JSON.stringify({ steps, goldens }))
