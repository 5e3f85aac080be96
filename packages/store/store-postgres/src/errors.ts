import { elide, isKeelError } from '@keel/base'
import { StoreQueryFailed, StoreUnavailable } from '@keel/store'

/** What was being done when the driver failed, for the message: `loading session s1`. */
export interface Operation {
  /** A verb phrase: `opening session s1`, `listing sessions`. */
  readonly what: string
  /** The session involved, when there is one. */
  readonly id?: string
}

/** Socket errors that mean the server cannot be reached or the connection broke. */
const NETWORK_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EADDRNOTAVAIL',
])

/** Messages of the `pg` driver itself (it gives these errors no code). */
const DRIVER_MESSAGES: ReadonlyArray<[RegExp, string]> = [
  [/^Connection terminated/i, 'the connection was closed by the server or the network'],
  [/not queryable|connection error/i, 'the connection broke'],
  [/^timeout expired|timeout exceeded when trying to connect/i, 'connecting timed out'],
  [/^Query read timeout/i, 'the server did not answer in time'],
]

/**
 * SQLSTATE classes and codes that mean the server cannot serve now, with the reason
 * shown: connection exceptions (08), shutdown and startup (57P01–57P03), a statement
 * cancelled by `statement_timeout` (57014), too many connections and other exhausted
 * resources (53), and a refused login (28, 3D: not transient — fix the URL).
 */
function unavailableState(sqlstate: string): { reason: string; transient: boolean } | undefined {
  if (sqlstate.startsWith('08')) return { reason: 'the connection failed', transient: true }
  if (sqlstate === '57P01') return { reason: 'the server is shutting down', transient: true }
  if (sqlstate === '57P02') return { reason: 'the server crashed and is restarting', transient: true }
  if (sqlstate === '57P03') return { reason: 'the server is starting up', transient: true }
  if (sqlstate === '57014') return { reason: 'the statement exceeded the statement timeout', transient: true }
  if (sqlstate === '53300') return { reason: 'the server has no connection to spare', transient: true }
  if (sqlstate.startsWith('53'))
    return { reason: 'the server ran out of a resource (disk, memory)', transient: true }
  if (sqlstate.startsWith('28')) return { reason: 'the server refused the login', transient: false }
  if (sqlstate === '3D000') return { reason: 'the database does not exist', transient: false }
  return undefined
}

interface DriverErrorShape {
  code?: unknown
  message?: unknown
  severity?: unknown
}

/**
 * Maps anything the `pg` driver throws to a Keel error: `StoreUnavailable` (the server
 * cannot be used now: refused, dropped, timed out, shutting down, overloaded, or a refused
 * login) or `StoreQueryFailed` (the server refused the statement itself, `details.sqlstate`).
 * A `KeelError` (ours) passes through. The driver's error is the `cause`.
 */
export function storeError(error: unknown, where: string, op: Operation): Error {
  if (isKeelError(error)) return error
  const e = (error ?? {}) as DriverErrorShape
  const code = typeof e.code === 'string' ? e.code : undefined
  const message = elide(typeof e.message === 'string' ? e.message : String(error))
  const base = { where, operation: op.what, ...(op.id === undefined ? {} : { id: op.id }) }
  const fail = (reason: string, transient: boolean, extra: Record<string, unknown>) =>
    new StoreUnavailable(
      `${where} is unavailable while ${op.what}: ${reason} (${message}). ${
        transient
          ? 'Nothing partial was stored; retry once the server is back'
          : 'Check the connection string (KEEL_PG_URL: user, password, database)'
      }`,
      { ...base, reason, transient, ...extra },
      { cause: error },
    )
  if (code !== undefined && NETWORK_ERRNOS.has(code)) {
    const reason =
      code === 'ECONNREFUSED' ? 'the server refused the connection (is it running?)' : 'the connection failed'
    return fail(reason, true, { errno: code })
  }
  const isServerError = typeof e.severity === 'string' && code !== undefined && /^[0-9A-Z]{5}$/.test(code)
  if (isServerError) {
    const state = unavailableState(code)
    if (state) return fail(state.reason, state.transient, { sqlstate: code })
    return new StoreQueryFailed(
      `${where} refused a statement while ${op.what}: ${message} (SQLSTATE ${code}); nothing was changed`,
      { ...base, sqlstate: code },
      { cause: error },
    )
  }
  if (/after calling end on the pool/i.test(message)) {
    return new StoreUnavailable(
      `this PostgreSQL store was closed, so it cannot be used for ${op.what}; create a new PostgresStore`,
      { ...base, reason: 'the store was closed', transient: false },
      { cause: error },
    )
  }
  for (const [pattern, reason] of DRIVER_MESSAGES) {
    if (pattern.test(message)) return fail(reason, true, {})
  }
  return new StoreQueryFailed(`${where} failed while ${op.what}: ${message}; nothing was changed`, base, {
    cause: error,
  })
}

/** The unavailability of a statement that got no answer in time (the server may be frozen). */
export function noAnswer(where: string, op: Operation, waitedMs: number, cause?: unknown): StoreUnavailable {
  return new StoreUnavailable(
    `${where} is unavailable while ${op.what}: no answer within ${waitedMs} ms, and the server did not answer a fresh connection either (frozen, or the network is down). The statement is atomic: it took effect whole or not at all; retry once the server is back`,
    {
      where,
      operation: op.what,
      ...(op.id === undefined ? {} : { id: op.id }),
      reason: 'no answer in time',
      transient: true,
      waitedMs,
    },
    cause === undefined ? undefined : { cause },
  )
}

/** Whether `error` is the unique violation of a conflicting insert (a raced append). */
export function isUniqueViolation(error: unknown): boolean {
  return isKeelError(error, 'STORE_QUERY_FAILED') && error.details.sqlstate === '23505'
}
