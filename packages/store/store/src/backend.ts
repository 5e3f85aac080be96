import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type { SessionEvent, SessionHeader } from '@keel/session'
import type { PendingBlob } from './blob.js'
import type { StoreLocation } from './errors.js'
import type { ListOptions, SessionSummary, StoreNotice } from './store.js'

/** One committed event and its stored JSON form (serialized once, at the size check). */
export interface PendingEvent {
  readonly event: SessionEvent
  /**
   * The stored line, without the newline: `JSON.stringify(event)`, or, when that is over
   * the line cap, the {@link BlobStub} line (then `blob` is set).
   */
  readonly json: string
  /**
   * Set when the event is spilled: its digest and complete JSON. The writer persists the
   * blob durably before (or atomically with) the stub line.
   */
  readonly blob?: PendingBlob
}

/** A stored log as a backend reads it, before validation. */
export interface StoredLog {
  /** The logical header, already checked for format version (and migrated). */
  readonly header: SessionHeader
  /**
   * The stored events in order, as raw envelopes fresh from `JSON.parse` that nothing else
   * references (they are frozen in place, not copied). May be a lazy, streaming iterable; it may
   * throw `SessionCorrupt` while iterating and may push to `notices` (a dropped torn tail).
   */
  readonly events: Iterable<unknown>
  /** What the backend noticed while reading (filled while `events` is consumed). */
  readonly notices: StoreNotice[]
  /**
   * Set when the log was stored in an older format and `events` are upgraded on the fly
   * by the registered migration chain; `open` then rewrites it in the current format.
   */
  readonly migratedFrom?: number
  /** Where the event of `seq` is stored (`-1`: the header), for error messages. */
  where(seq: number): StoreLocation
}

/** The exclusive writer of one session, returned by a backend with the lock held. */
export interface LogWriter {
  /** The folder holding this session's files, when the backend keeps one (JSONL). */
  readonly directory?: string
  /**
   * Replaces the stored log by `events` in the current format (after a migration), durably
   * and atomically, before `prepare`. A backend without it cannot open migrated logs for writing.
   */
  rewrite?(header: SessionHeader, events: readonly PendingEvent[]): Promise<void>
  /** Called once after the log was read and validated, before the first append (repairs a torn tail). */
  prepare?(): Promise<void>
  /**
   * Writes one batch durably (fsync / commit) before resolving. Batches arrive in seq
   * order, never concurrently. Rejects with `ConcurrentAppend` when the stored log moved.
   */
  append(batch: readonly PendingEvent[]): Promise<void>
  /** Releases the lock and any resource; called once. */
  close(): Promise<void>
}

/**
 * What a storage backend implements; {@link BackendStore} (`backend-store.ts`) turns it into a full
 * {@link SessionStore} (handles, batching, flush, validation, interrupted-turn closure).
 */
export interface StoreBackend {
  readonly kind: string
  /** Where sessions live, for messages (`/home/me/.keel/sessions`, `postgres schema keel`). */
  readonly where: string
  /** Atomically stores a new session (header and initial events) and returns its writer. */
  create(
    header: SessionHeader,
    initial: readonly PendingEvent[],
  ): Promise<{ writer: LogWriter; notices: StoreNotice[] }>
  /** Takes the writer lock, then reads the log. `SessionNotFound`, `SessionLocked`. */
  openForWrite(id: string): Promise<{ log: StoredLog; writer: LogWriter; notices: StoreNotice[] }>
  /** Reads the log without a lock. `SessionNotFound`. */
  read(id: string): Promise<StoredLog>
  /**
   * Low-level append: reads the log (under the lock where the backend has one), lets
   * `build` validate and serialize the new events, and writes them in one batch, refusing
   * with `ConcurrentAppend` if the stored next seq is not `firstSeq`.
   */
  appendStored(
    id: string,
    build: (log: StoredLog) => { firstSeq: number; pending: PendingEvent[] },
  ): Promise<void>
  list(options: Required<Pick<ListOptions, 'limit'>> & ListOptions): Promise<SessionSummary[]>
  readRaw(id: string): Promise<string | undefined>
  close(): Promise<void>
}

/** This host's name, as lock holders record it. */
export const HOST = hostname()

/** A fresh session id. */
export function newSessionId(): string {
  return randomUUID()
}
