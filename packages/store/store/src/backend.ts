import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type { PrefixReader, SessionEvent, SessionHeader } from '@keel/session'
import type { PendingBlob } from './blob.js'
import type { CheckpointDocument } from './checkpoint-file.js'
import type { StoreLocation } from './errors.js'
import type { IntegrityMark, IntegrityStart } from './integrity.js'
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
  /**
   * Set when the backend was asked for the latest checkpoint and its tie to this log held
   * (its integrity record is the log's record ending at its seq, and that record's lines
   * have its CRC): `events` are then the tail, from `checkpoint.doc.seq` on, and `prefix`
   * reads the events before it on demand.
   */
  readonly checkpoint?: {
    readonly doc: CheckpointDocument
    readonly prefix: PrefixReader
    /** Its stored size in bytes. */
    readonly bytes: number
  }
  /**
   * When asked to vouch: the seqs an integrity record of this store covers. Their lines
   * are loaded without re-checking the payload; the record's CRC is checked once its last
   * line was read, and `events` throws `IntegrityBroken` when it differs.
   */
  readonly trusted?: (seq: number) => boolean
  /**
   * Once `events` was read to the end: where a writer continues the integrity chain.
   * Undefined for a backend that keeps no integrity records.
   */
  integrity?(): IntegrityStart
}

/** How to read a stored log. */
export interface ReadOptions {
  /** Start from the latest checkpoint when one exists and its tie to the log holds (a notice says why not). */
  readonly checkpoint?: boolean
  /** Vouch for the lines integrity records cover (`StoredLog.trusted`). */
  readonly trust?: boolean
}

/**
 * A checkpoint as the shared layer hands it to a writer: the backend writes `blobs` (those
 * of its spilled events) first, then stores the document with its `locator` and the blobs'
 * digests as its index.
 */
export type CheckpointInput = Omit<CheckpointDocument, 'locator' | 'blobs'> & {
  readonly blobs: readonly PendingBlob[]
}

/** The exclusive writer of one session, returned by a backend with the lock held. */
export interface LogWriter {
  /** The folder holding this session's files, when the backend keeps one (JSONL). */
  readonly directory?: string
  /**
   * Replaces the stored log by `events` in the current format (after a migration), durably
   * and atomically, before `prepare`; `mark` covers them all. Drops the old integrity
   * records and checkpoints. A backend without it cannot open migrated logs for writing.
   */
  rewrite?(
    header: SessionHeader,
    events: readonly PendingEvent[],
    mark: IntegrityMark | undefined,
  ): Promise<void>
  /**
   * Called once after the log was read and validated, before the first append, with the
   * log that was used (repairs a torn tail, drops integrity records that did not hold).
   */
  prepare?(log: StoredLog): Promise<void>
  /**
   * Writes one batch durably (fsync / commit) before resolving, then `mark` (an integrity
   * record covering the batch and every line since the previous record; the batch may be
   * empty when only a record is due). Batches arrive in seq order, never concurrently.
   * Rejects with `ConcurrentAppend` when the stored log moved.
   */
  append(batch: readonly PendingEvent[], mark?: IntegrityMark): Promise<void>
  /**
   * Stores a checkpoint at `doc.seq` (whose record was just written), atomically, in place
   * of older ones, and resolves to its size in bytes. Need not be durable: a lost
   * checkpoint costs a replay, nothing else.
   */
  saveCheckpoint?(doc: CheckpointInput): Promise<number>
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
  /**
   * Atomically stores a new session (header, initial events and `mark`, the integrity
   * record covering them) and returns its writer.
   */
  create(
    header: SessionHeader,
    initial: readonly PendingEvent[],
    mark?: IntegrityMark,
  ): Promise<{ writer: LogWriter; notices: StoreNotice[] }>
  /** Takes the writer lock, then reads the log. `SessionNotFound`, `SessionLocked`. */
  openForWrite(
    id: string,
    options?: ReadOptions,
  ): Promise<{ log: StoredLog; writer: LogWriter; notices: StoreNotice[] }>
  /** Reads the log without a lock. `SessionNotFound`. */
  read(id: string, options?: ReadOptions): Promise<StoredLog>
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
