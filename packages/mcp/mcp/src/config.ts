// Where MCP servers come from: `.mcp.json` at the project root (Claude Code's format, meant
// to be committed), `$KEEL_HOME/mcp.json` (the person's own servers, same format), and the
// `mcpServers` of the plugin's config in a preset. Names collide → the whole entry of the
// winner is used (preset > project > user), no field merging. A broken entry is skipped
// and reported with its file and JSON path; the others still load.
import { createHash } from 'node:crypto'
import { join } from 'node:path'
import {
  boundIssues,
  canonicalJson,
  elide,
  errorMessage,
  formatJsonPath,
  MAX_ERROR_KEY_CHARS,
  readBoundedText,
} from '@keel/base'
import { z } from 'zod'

/** Server names: letters, digits, `-` and `_` (they become part of tool names). */
export const SERVER_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/u

/** Largest config file read (a bigger one is refused, not truncated). */
export const MAX_CONFIG_BYTES = 1024 * 1024

const timeout = z.number().int().positive().max(3_600_000)
const stringRecord = z.record(z.string(), z.string())

const stdioShape = {
  type: z.literal('stdio').optional(),
  /** The program to start; `${VAR}` references are expanded. */
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  /** Set in the child's environment on top of what it inherits. */
  env: stringRecord.optional(),
  /** The child's working directory (default: the agent's). */
  cwd: z.string().min(1).optional(),
  /** Per-call deadline in milliseconds. */
  timeout: timeout.optional(),
  /** How long the handshake may take, in milliseconds. */
  startupTimeout: timeout.optional(),
  /** `false` keeps the entry without starting it. */
  enabled: z.boolean().optional(),
}

const remoteShape = {
  /** `http` (alias `streamable-http`): Streamable HTTP, falling back to SSE; `sse`: the old HTTP+SSE transport. */
  type: z.enum(['http', 'streamable-http', 'sse']),
  url: z.string().min(1),
  headers: stringRecord.optional(),
  timeout: timeout.optional(),
  startupTimeout: timeout.optional(),
  enabled: z.boolean().optional(),
}

/** Keys Claude Code defines that Keel reads but does not act on (reported once). */
const UNSUPPORTED_KEYS = ['oauth', 'headersHelper', 'alwaysLoad'] as const

/** One server entry as a preset writes it (strict: a typo is a preset error). */
export const serverEntrySchema = z.union([z.strictObject(stdioShape), z.strictObject(remoteShape)])

/** A server entry as written (before expansion). */
export type ServerEntry = z.output<typeof serverEntrySchema>

/** The `mcpServers` map of a preset's plugin config. */
export const serverMapSchema = z.record(z.string().regex(SERVER_NAME_PATTERN), serverEntrySchema)

/** Where an entry came from; also its precedence (preset over project over user). */
export type ServerScope = 'preset' | 'project' | 'user'

/** Something wrong with the configuration, named by file and JSON path. */
export interface ConfigProblem {
  /** The file (or `preset`). */
  readonly source: string
  /** `$.mcpServers.github.url` */
  readonly path: string
  readonly message: string
}

/** One entry read from one place, not yet expanded. */
export interface ConfiguredServer {
  readonly name: string
  readonly scope: ServerScope
  readonly source: string
  readonly entry: ServerEntry
  /** `sha256:` of the entry's canonical JSON: a project approval holds for exactly this entry. */
  readonly digest: string
}

/** `sha256:<hex>` of a value's canonical JSON. */
export function entryDigest(value: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}`
}

/**
 * Reads one entry of a file leniently: unknown keys are dropped (and reported), Claude
 * Code's unsupported ones too; an entry with `url` and no `type` is an error (as in Claude
 * Code), `ws` is not supported.
 */
function fileEntry(
  name: string,
  raw: unknown,
  source: string,
  problems: ConfigProblem[],
): ServerEntry | undefined {
  const at = (...more: PropertyKey[]) => formatJsonPath(['mcpServers', name, ...more], '$')
  if (!SERVER_NAME_PATTERN.test(name)) {
    problems.push({ source, path: at(), message: 'server names use 1–64 of A-Z a-z 0-9 - _; entry skipped' })
    return undefined
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    problems.push({ source, path: at(), message: 'expected an object; entry skipped' })
    return undefined
  }
  const record = { ...(raw as Record<string, unknown>) }
  if (record.type === 'ws') {
    problems.push({ source, path: at('type'), message: 'WebSocket servers are not supported; entry skipped' })
    return undefined
  }
  if (record.type === undefined && record.url !== undefined) {
    problems.push({
      source,
      path: at('type'),
      message: 'an entry with "url" needs "type": "http" or "sse"; entry skipped',
    })
    return undefined
  }
  const remote = record.type !== undefined && record.type !== 'stdio'
  const known = new Set(Object.keys(remote ? remoteShape : stdioShape))
  for (const key of Object.keys(record)) {
    if (known.has(key)) continue
    const why = (UNSUPPORTED_KEYS as readonly string[]).includes(key)
      ? 'is not supported by Keel and is ignored'
      : 'is not a known field and is ignored'
    problems.push({
      source,
      path: at(key),
      message: `${JSON.stringify(elide(key, MAX_ERROR_KEY_CHARS))} ${why}`,
    })
    delete record[key]
  }
  const parsed = (remote ? z.strictObject(remoteShape) : z.strictObject(stdioShape)).safeParse(record)
  if (!parsed.success) {
    const issue = boundIssues(parsed.error.issues).issues[0]!
    problems.push({
      source,
      path: at(...parsed.error.issues[0]!.path),
      message: `${issue.message}; entry skipped`,
    })
    return undefined
  }
  return parsed.data
}

/**
 * The servers of one file (`{ "mcpServers": { … } }`). A missing file has none; an
 * unreadable, oversized or malformed one is one problem and no servers.
 */
export function readServerFile(
  file: string,
  scope: ServerScope,
): {
  servers: ConfiguredServer[]
  problems: ConfigProblem[]
} {
  const problems: ConfigProblem[] = []
  let text: string
  const refused = (message: string) => ({ servers: [], problems: [{ source: file, path: '$', message }] })
  try {
    const read = readBoundedText(file, MAX_CONFIG_BYTES)
    if (read.kind === 'missing') return { servers: [], problems }
    if (read.kind === 'too-large') return refused(`larger than ${MAX_CONFIG_BYTES} bytes; not read`)
    if (read.kind === 'not-a-file') return refused(`${read.what}, not a regular file; not read`)
    text = read.text
  } catch (error) {
    return refused(`cannot read: ${errorMessage(error)}`)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    return {
      servers: [],
      problems: [{ source: file, path: '$', message: `not valid JSON: ${errorMessage(error)}` }],
    }
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) {
    return {
      servers: [],
      problems: [{ source: file, path: '$', message: 'expected an object with "mcpServers"' }],
    }
  }
  const map = (json as Record<string, unknown>).mcpServers
  if (map === undefined) return { servers: [], problems }
  if (map === null || typeof map !== 'object' || Array.isArray(map)) {
    return { servers: [], problems: [{ source: file, path: '$.mcpServers', message: 'expected an object' }] }
  }
  const servers: ConfiguredServer[] = []
  for (const [name, raw] of Object.entries(map as Record<string, unknown>)) {
    const entry = fileEntry(name, raw, file, problems)
    if (entry) servers.push({ name, scope, source: file, entry, digest: entryDigest(raw) })
  }
  return { servers, problems }
}

/** What {@link collectServers} reads. */
export interface ServerSources {
  /** The project root: its `.mcp.json` is read when `project` is on. */
  readonly projectDir: string
  /** `$KEEL_HOME`: its `mcp.json` is read when `user` is on. */
  readonly keelHome: string
  /** The preset's servers (already validated by the plugin's config schema). */
  readonly preset?: Readonly<Record<string, ServerEntry>>
  readonly project?: boolean
  readonly user?: boolean
}

/** The project's server file. */
export function projectFile(projectDir: string): string {
  return join(projectDir, '.mcp.json')
}

/** The person's server file. */
export function userFile(keelHome: string): string {
  return join(keelHome, 'mcp.json')
}

/**
 * Every configured server, one per name (preset over project over user), in that order of
 * scope and then of the file, with every problem met on the way.
 */
export function collectServers(sources: ServerSources): {
  servers: ConfiguredServer[]
  problems: ConfigProblem[]
} {
  const problems: ConfigProblem[] = []
  const all: ConfiguredServer[] = []
  for (const [name, entry] of Object.entries(sources.preset ?? {})) {
    all.push({ name, scope: 'preset', source: 'preset', entry, digest: entryDigest(entry) })
  }
  if (sources.project !== false) {
    const read = readServerFile(projectFile(sources.projectDir), 'project')
    all.push(...read.servers)
    problems.push(...read.problems)
  }
  if (sources.user !== false) {
    const read = readServerFile(userFile(sources.keelHome), 'user')
    all.push(...read.servers)
    problems.push(...read.problems)
  }
  const seen = new Set<string>()
  const servers = all.filter((s) => {
    if (seen.has(s.name)) return false
    seen.add(s.name)
    return true
  })
  return { servers, problems }
}
