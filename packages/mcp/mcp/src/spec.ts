// A configured entry made concrete for one agent: `${VAR}` references expanded from the
// environment, the transport picked, the URL checked.
import { isAbsolute, resolve } from 'node:path'
import type { ConfiguredServer, ServerScope } from './config.js'
import { expandRecord, expandText } from './expand.js'

/** How to reach a server. */
export type ServerTransport =
  | {
      readonly kind: 'stdio'
      readonly command: string
      readonly args: readonly string[]
      /** Set on top of the inherited environment. */
      readonly env: Readonly<Record<string, string>>
      readonly cwd: string
    }
  | {
      /** `http`: Streamable HTTP, with a fallback to SSE when the server answers it with a 4xx; `sse`: SSE only. */
      readonly kind: 'http' | 'sse'
      readonly url: string
      readonly headers: Readonly<Record<string, string>>
    }

/** One server, ready to connect. */
export interface ServerSpec {
  readonly name: string
  readonly scope: ServerScope
  readonly source: string
  readonly digest: string
  readonly enabled: boolean
  readonly transport: ServerTransport
  /** Per-call deadline from the entry, when it sets one. */
  readonly timeoutMs?: number
  /** Handshake deadline from the entry, when it sets one. */
  readonly startupTimeoutMs?: number
  /** Variables referenced without a default and not set (left as `${NAME}`). */
  readonly missing: readonly string[]
  /** Why it cannot be used as configured (a URL that is not http(s) after expansion). */
  readonly problem?: string
}

/** The transport's kind as the log and the status list show it. */
export function transportKind(spec: ServerSpec): 'stdio' | 'http' | 'sse' {
  return spec.transport.kind
}

/**
 * Expands the entry's `command`, `args`, `env`, `cwd`, `url` and `headers` from `env`, and
 * checks what expansion produced.
 */
export function resolveServer(
  server: ConfiguredServer,
  env: Readonly<Record<string, string | undefined>>,
  projectDir: string,
): ServerSpec {
  const missing: string[] = []
  const text = (value: string): string => {
    const expanded = expandText(value, env)
    for (const name of expanded.missing) if (!missing.includes(name)) missing.push(name)
    return expanded.text
  }
  const { entry } = server
  const base = {
    name: server.name,
    scope: server.scope,
    source: server.source,
    digest: server.digest,
    enabled: entry.enabled !== false,
    ...(entry.timeout === undefined ? {} : { timeoutMs: entry.timeout }),
    ...(entry.startupTimeout === undefined ? {} : { startupTimeoutMs: entry.startupTimeout }),
  }
  if (!('url' in entry)) {
    const cwd = entry.cwd === undefined ? projectDir : text(entry.cwd)
    return {
      ...base,
      transport: {
        kind: 'stdio',
        command: text(entry.command),
        args: (entry.args ?? []).map(text),
        env: expandRecord(entry.env ?? {}, env, missing),
        cwd: isAbsolute(cwd) ? cwd : resolve(projectDir, cwd),
      },
      missing,
    }
  }
  const url = text(entry.url)
  const headers = expandRecord(entry.headers ?? {}, env, missing)
  const kind = entry.type === 'sse' ? 'sse' : 'http'
  let problem: string | undefined
  try {
    const parsed = new URL(url)
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')
      problem = `the url must be http(s), got ${parsed.protocol}`
  } catch {
    problem = `the url ${JSON.stringify(url.slice(0, 200))} is not a valid URL${missing.length > 0 ? ` (unset: ${missing.join(', ')})` : ''}`
  }
  return {
    ...base,
    transport: { kind, url, headers },
    missing,
    ...(problem === undefined ? {} : { problem }),
  }
}
