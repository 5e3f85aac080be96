import { HOST, type LockHolder, SessionLocked, SessionNotFound, type StoreNotice } from '@keel/store'
import type pg from 'pg'

/** A writer lease this process holds: the session and its fencing token. */
export interface Lease {
  readonly id: string
  readonly token: number
}

interface LeaseRow {
  writer: LockHolder | null
  lease_token: number
  live: boolean
}

/** Whether a process with this pid runs on this host (EPERM: it runs, as another user). */
function running(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Whether the recorded writer still holds the session: its lease has not expired and, when
 * it is on this host, its process still runs (a writer killed here is released at once;
 * one on another host when its lease expires).
 */
export function holds(row: LeaseRow): boolean {
  if (row.writer === null || !row.live) return false
  const { host, pid } = row.writer
  if (host === HOST && typeof pid === 'number' && !running(pid)) return false
  return true
}

function staleNotice(id: string, holder: LockHolder, expired: boolean): StoreNotice {
  const who = `process ${holder.pid ?? '?'} on ${holder.host ?? 'an unknown host'}`
  return {
    code: 'STALE_LOCK_TAKEN_OVER',
    message: `session ${id} was still marked open for writing by ${who}, ${expired ? 'whose lease expired without a heartbeat' : 'which no longer runs'}; took its writer lease over (its later writes are refused)`,
  }
}

export const LOCKED_HINT =
  'close it there first; a writer that stops without closing is released when its lease expires (a writer on this host as soon as its process is gone)'

/**
 * Writer leases in `<schema>.sessions`: `writer` (pid, host, since), `lease_token` (the
 * fencing token every write checks) and `lease_expires` (renewed by a heartbeat of all
 * leases this process holds, in one statement). No connection is pinned per session.
 */
export class Leases {
  readonly #pool: pg.Pool
  readonly #s: string
  readonly #ttlMs: number
  readonly #held = new Map<string, number>()
  #timer: ReturnType<typeof setInterval> | undefined
  #beat: Promise<void> | undefined

  constructor(pool: pg.Pool, schemaSql: string, ttlMs: number) {
    this.#pool = pool
    this.#s = schemaSql
    this.#ttlMs = ttlMs
  }

  get ttlMs(): number {
    return this.#ttlMs
  }

  /** The lease row of `id` (`SessionNotFound`). */
  async row(id: string): Promise<LeaseRow> {
    const { rows } = await this.#pool.query<LeaseRow>(
      `SELECT writer, lease_token, coalesce(lease_expires > now(), false) AS live FROM ${this.#s}.sessions WHERE id = $1`,
      [id],
    )
    const row = rows[0]
    if (!row) throw new SessionNotFound(id, this.#s)
    return row
  }

  /**
   * Takes the writer lease of an existing session: refuses a live holder with
   * `SessionLocked` (naming host and pid), takes a stale one over with a notice.
   */
  async acquire(id: string, where: string): Promise<{ lease: Lease; notices: StoreNotice[] }> {
    const notices: StoreNotice[] = []
    for (;;) {
      const row = await this.row(id).catch((error: unknown) => {
        throw error instanceof SessionNotFound ? new SessionNotFound(id, where) : error
      })
      if (holds(row)) throw new SessionLocked(id, row.writer ?? {}, LOCKED_HINT)
      const { rows } = await this.#pool.query<{ lease_token: number }>(
        `UPDATE ${this.#s}.sessions
           SET writer = $3, lease_token = lease_token + 1,
               lease_expires = now() + $4 * interval '1 millisecond'
         WHERE id = $1 AND lease_token = $2 RETURNING lease_token`,
        [id, row.lease_token, this.holder(), this.#ttlMs],
      )
      const taken = rows[0]
      if (!taken) continue // another opener moved the token first: look again
      if (row.writer !== null) notices.push(staleNotice(id, row.writer, !row.live))
      const lease = { id, token: taken.lease_token }
      this.hold(lease)
      return { lease, notices }
    }
  }

  /** This process as a lease holder. */
  holder(): Required<LockHolder> {
    return { pid: process.pid, host: HOST, since: Date.now() }
  }

  /** Starts renewing `lease` (created with the session, or acquired). */
  hold(lease: Lease): void {
    this.#held.set(lease.id, lease.token)
    this.#timer ??= setInterval(() => void this.heartbeat(), Math.max(50, Math.floor(this.#ttlMs / 3)))
    this.#timer.unref()
  }

  /** Ends `lease` (if it is still ours) and stops renewing it. */
  async release(lease: Lease): Promise<void> {
    if (this.#held.get(lease.id) === lease.token) this.#held.delete(lease.id)
    this.#stopIfIdle()
    await this.#pool.query(
      `UPDATE ${this.#s}.sessions SET writer = NULL, lease_expires = NULL WHERE id = $1 AND lease_token = $2`,
      [lease.id, lease.token],
    )
  }

  /** Renews every held lease in one statement; a lease found taken over is dropped. */
  heartbeat(): Promise<void> {
    this.#beat ??= (async () => {
      const ids = [...this.#held.keys()]
      if (ids.length === 0) return
      const tokens = ids.map((id) => this.#held.get(id)!)
      const { rows } = await this.#pool.query<{ id: string }>(
        `UPDATE ${this.#s}.sessions AS s SET lease_expires = now() + $3 * interval '1 millisecond'
           FROM unnest($1::text[], $2::integer[]) AS h(id, token)
          WHERE s.id = h.id AND s.lease_token = h.token RETURNING s.id`,
        [ids, tokens, this.#ttlMs],
      )
      const renewed = new Set(rows.map((r) => r.id))
      // A lease taken over meanwhile is dropped here; its next write is refused by the token.
      for (const [i, id] of ids.entries()) {
        if (!renewed.has(id) && this.#held.get(id) === tokens[i]) this.#held.delete(id)
      }
    })()
      // A failed heartbeat loses nothing: every write checks the token itself, and the
      // next beat renews. The error is kept for the message of a later refused write.
      .catch((error: unknown) => {
        this.lastHeartbeatError = error
      })
      .finally(() => {
        this.#beat = undefined
        this.#stopIfIdle()
      })
    return this.#beat
  }

  lastHeartbeatError: unknown

  #stopIfIdle(): void {
    if (this.#held.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer)
      this.#timer = undefined
    }
  }

  /** Stops the heartbeat (the store is closing; its handles released their leases). */
  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
    await this.#beat
  }
}
