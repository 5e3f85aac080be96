import { randomUUID } from 'node:crypto'
import { HOST, type LockHolder, SessionLocked, SessionNotFound, type StoreNotice } from '@keel/store'
import type { Db } from './driver.js'

/** A writer lease this process holds: the session and its fencing token. */
export interface Lease {
  readonly id: string
  readonly token: number
}

/** A lease holder as `writer` records it: the process, and which store of it (`instance`). */
export interface Holder extends LockHolder {
  /** The {@link Leases} (one per store object) that took the lease; absent in rows of older builds. */
  instance?: string
}

interface LeaseRow {
  writer: Holder | null
  lease_token: number
  live: boolean
}

/**
 * The instances of {@link Leases} open in this process (one per store object, removed when
 * it stops): a lease recorded with this pid and host whose instance is not here was left by
 * a store of this process that is closed, or by an earlier process that had the same pid.
 */
const OPEN_INSTANCES = new Set<string>()

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
 * Whether the recorded writer holds the session against `self` (the asking store): its
 * lease has not expired and it is not stale. On this host a writer whose process is gone is
 * stale at once; in this very process, a lease of `self` (released, or whose release did not
 * reach the server) or of a store no longer open is stale too — only another open store of
 * this process holds. A writer on another host holds until its lease expires.
 */
export function holds(row: LeaseRow, self: string): boolean {
  if (row.writer === null || !row.live) return false
  const { host, pid, instance } = row.writer
  if (host !== HOST || typeof pid !== 'number') return true
  if (pid !== process.pid) return running(pid)
  return instance !== undefined && instance !== self && OPEN_INSTANCES.has(instance)
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
 * Writer leases in `<schema>.sessions`: `writer` (pid, host, since, instance), `lease_token`
 * (the fencing token every write checks) and `lease_expires` (renewed by a heartbeat of all
 * leases this store holds, in one statement). No connection is pinned per session. A
 * release that cannot reach the server is kept and retried by the heartbeat; meanwhile this
 * store takes its own lease back at once when the session is opened again.
 */
export class Leases {
  readonly #db: Db
  readonly #s: string
  readonly #ttlMs: number
  readonly #instance = randomUUID()
  /** Leases of open handles, renewed by the heartbeat: session → token. */
  readonly #held = new Map<string, number>()
  /** Leases whose release did not reach the server: session → token, retried by the heartbeat. */
  readonly #unreleased = new Map<string, number>()
  #timer: ReturnType<typeof setInterval> | undefined
  #beat: Promise<void> | undefined

  constructor(db: Db, schemaSql: string, ttlMs: number) {
    this.#db = db
    this.#s = schemaSql
    this.#ttlMs = ttlMs
    OPEN_INSTANCES.add(this.#instance)
  }

  get ttlMs(): number {
    return this.#ttlMs
  }

  /** The failure of the last heartbeat, if it failed (named by a later refused write). */
  lastHeartbeatError: unknown

  /** Whether `row`'s writer holds the session against this store (see {@link holds}). */
  holds(row: LeaseRow): boolean {
    return holds(row, this.#instance)
  }

  /** The lease row of `id` (`SessionNotFound`). */
  async row(id: string, where: string): Promise<LeaseRow> {
    const { rows } = await this.#db.query<LeaseRow>(
      { what: `reading the writer lease of session ${id}`, id },
      `SELECT writer, lease_token, coalesce(lease_expires > now(), false) AS live FROM ${this.#s}.sessions WHERE id = $1`,
      [id],
    )
    const row = rows[0]
    if (!row) throw new SessionNotFound(id, where)
    return row
  }

  /**
   * Takes the writer lease of an existing session: refuses a live holder with
   * `SessionLocked` (naming host and pid), takes a stale one over with a notice (its own
   * lease, left by a handle of this store, silently).
   */
  async acquire(id: string, where: string): Promise<{ lease: Lease; notices: StoreNotice[] }> {
    const notices: StoreNotice[] = []
    for (;;) {
      const row = await this.row(id, where)
      if (this.holds(row)) throw new SessionLocked(id, row.writer ?? {}, LOCKED_HINT)
      const { rows } = await this.#db.query<{ lease_token: number }>(
        { what: `taking the writer lease of session ${id}`, id },
        `UPDATE ${this.#s}.sessions
           SET writer = $3, lease_token = lease_token + 1,
               lease_expires = now() + $4 * interval '1 millisecond'
         WHERE id = $1 AND lease_token = $2 RETURNING lease_token`,
        [id, row.lease_token, this.holder(), this.#ttlMs],
      )
      const taken = rows[0]
      if (!taken) continue // another opener moved the token first: look again
      this.#unreleased.delete(id) // whatever of ours was left unreleased is superseded
      if (row.writer !== null && row.writer.instance !== this.#instance) {
        notices.push(staleNotice(id, row.writer, !row.live))
      }
      const lease = { id, token: taken.lease_token }
      this.hold(lease)
      return { lease, notices }
    }
  }

  /** This store as a lease holder. */
  holder(): Required<Holder> {
    return { pid: process.pid, host: HOST, since: Date.now(), instance: this.#instance }
  }

  /** Starts renewing `lease` (created with the session, or acquired). */
  hold(lease: Lease): void {
    this.#held.set(lease.id, lease.token)
    this.#unreleased.delete(lease.id)
    this.#startTimer()
  }

  /**
   * Ends `lease` (if it is still ours) and stops renewing it. When the server cannot be
   * reached the lease is kept as unreleased — retried by the heartbeat, and taken back at
   * once by this store on the next open — and the typed error is thrown.
   */
  async release(lease: Lease): Promise<void> {
    if (this.#held.get(lease.id) === lease.token) this.#held.delete(lease.id)
    try {
      await this.#db.query(
        { what: `releasing the writer lease of session ${lease.id}`, id: lease.id },
        `UPDATE ${this.#s}.sessions SET writer = NULL, lease_expires = NULL WHERE id = $1 AND lease_token = $2`,
        [lease.id, lease.token],
      )
      if (this.#unreleased.get(lease.id) === lease.token) this.#unreleased.delete(lease.id)
    } catch (error) {
      if (!this.#held.has(lease.id)) this.#unreleased.set(lease.id, lease.token)
      throw error
    } finally {
      if (this.#unreleased.size > 0) this.#startTimer()
      else this.#stopIfIdle()
    }
  }

  /**
   * Renews every held lease in one statement (a lease found taken over is dropped), and
   * retries the releases that did not reach the server.
   */
  heartbeat(): Promise<void> {
    this.#beat ??= (async () => {
      await this.#renew()
      await this.#retryReleases()
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

  async #renew(): Promise<void> {
    const ids = [...this.#held.keys()]
    if (ids.length === 0) return
    const tokens = ids.map((id) => this.#held.get(id)!)
    const { rows } = await this.#db.query<{ id: string }>(
      { what: 'renewing writer leases' },
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
  }

  async #retryReleases(): Promise<void> {
    const ids = [...this.#unreleased.keys()]
    if (ids.length === 0) return
    const tokens = ids.map((id) => this.#unreleased.get(id)!)
    await this.#db.query(
      { what: 'releasing writer leases' },
      `UPDATE ${this.#s}.sessions AS s SET writer = NULL, lease_expires = NULL
         FROM unnest($1::text[], $2::integer[]) AS h(id, token)
        WHERE s.id = h.id AND s.lease_token = h.token`,
      [ids, tokens],
    )
    for (const [i, id] of ids.entries()) {
      if (this.#unreleased.get(id) === tokens[i]) this.#unreleased.delete(id)
    }
  }

  #startTimer(): void {
    this.#timer ??= setInterval(() => void this.heartbeat(), Math.max(50, Math.floor(this.#ttlMs / 3)))
    this.#timer.unref()
  }

  #stopIfIdle(): void {
    if (this.#held.size === 0 && this.#unreleased.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer)
      this.#timer = undefined
    }
  }

  /**
   * Stops the heartbeat (the store is closing; its handles released their leases) after
   * one last try at the releases that did not reach the server. If that fails too, those
   * leases expire after the TTL (on this host: as soon as this process is gone).
   */
  async stop(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
    await this.#beat
    await this.#retryReleases().catch((error: unknown) => {
      this.lastHeartbeatError = error
    })
    OPEN_INSTANCES.delete(this.#instance)
  }
}
