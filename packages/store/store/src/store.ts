import type {
  Session,
  SessionDelegation,
  SessionEvent,
  SessionHeader,
  SessionHeaderInit,
  SessionId,
} from '@keel/session'
import type { CheckpointPolicy } from './checkpoint-file.js'

/** How to create a session in a store. */
export interface CreateSessionInit {
  /** The id; a fresh random one when absent. */
  id?: string
  /** Header fields (cwd, agentPreset, title, …). Ignored when `from` is given. */
  header?: SessionHeaderInit
  /**
   * An in-memory session to persist as-is (e.g. the result of `session.fork(...)`): its
   * header and every event are written before the handle is returned.
   */
  from?: Session
}

/** Options of `SessionStore.fork`. */
export interface ForkOptions {
  /** The last parent seq to copy (default: the whole log). Must not cut inside an open turn. */
  atSeq?: number
  /** The child's id; a fresh random one when absent. */
  childId?: string
}

/** Options every store built on the shared handle logic accepts. */
export interface StoreOptions {
  /**
   * Largest event, in bytes (UTF-8 of its JSON). A larger event is refused at append with
   * `EventTooLarge` before it is committed. Default 64 MiB.
   */
  maxEventBytes?: number
  /**
   * Largest stored line of one event (UTF-8 bytes of its JSON). A longer event is stored
   * whole in a content-addressed blob beside the log and its line is a `BlobStub`; readers
   * put it back transparently. Default 1 MiB (never more than `maxEventBytes`).
   */
  maxLineBytes?: number
  /**
   * Also write appended events once they waited this long, in ms, without a `flush()`.
   * Default: none — events are written (and fsynced) only at `flush()` and `close()`, the
   * durability points, so nothing is written while a tool runs.
   */
  batchWindowMs?: number
  /**
   * When to write checkpoints (the folded session state, so a load reads only what came
   * after): at a turn end once `every` events were appended since the last (default
   * 2,000), and on close once the log has `minEvents` (default 200). `false`: never; loads
   * then always replay the log.
   */
  checkpoints?: false | CheckpointPolicy
}

/** Header-level facts of one stored session, as `list()` returns them. */
export interface SessionSummary {
  id: SessionId
  createdAt: number
  cwd?: string
  agentPreset?: string
  title?: string
  parentSession?: SessionId
  /** The parent session, turn and call a child agent's session answers (its header's `delegatedBy`). */
  delegatedBy?: SessionDelegation
  /** Number of events, when the backend knows it without reading the log. */
  eventCount?: number
  /** Time of the session's last stored event (its `createdAt` while it has none), Unix ms. */
  lastActivityAt: number
}

/** Filters of `list()`. */
export interface ListOptions {
  /** Only sessions created in this working directory. */
  cwd?: string
  /** At most this many, newest first. Default 50. */
  limit?: number
  /**
   * What "newest" means: `created` (the header's `createdAt`, the default) or `activity`
   * (`lastActivityAt`, the time of the last event), ties broken by id.
   */
  orderBy?: 'created' | 'activity'
  /**
   * Told of each stored session the listing leaves out because it cannot be read (its header
   * is damaged, its log is not a regular file, …): `SESSION_UNREADABLE`, naming it and why.
   * The others are listed all the same; a session being created is not one of them.
   */
  onNotice?: (notice: StoreNotice) => void
}

/** Something the store noticed and handled while reading a session (never silent). */
export interface StoreNotice {
  /** `TORN_TAIL_DROPPED`, `STALE_LOCK_TAKEN_OVER`, `INTERRUPTED_TURN_CLOSED`, `CHECKPOINT_IGNORED`, `SESSION_UNREADABLE`, … */
  code: string
  message: string
}

/**
 * A read-only view of a stored session: nothing is repaired or written. Unlike a load, it
 * keeps events whose plugin is not loaded (not ignorable ones too), verbatim and not
 * interpreted, with an `UNKNOWN_EVENTS_KEPT` notice naming their types.
 */
export interface SessionInspection {
  header: SessionHeader
  events: readonly SessionEvent[]
  notices: readonly StoreNotice[]
  /** The turn that was open when the log ends (a crash mid-turn), if any. */
  interruptedTurn?: number
}

/** What `verify` found: a full replay of every event against the checkpoint and the integrity records. */
export interface SessionVerification {
  id: SessionId
  /** Events in the log (all replayed and validated in full). */
  events: number
  /** The latest checkpoint: its seq, whether this build can resume from it, and why not. */
  checkpoint?: { seq: number; usable: boolean; reason?: string }
  /** The first seq no integrity record covers (`events` when the whole log is covered); every record's CRC held. */
  coveredTo?: number
  /** Where the state resumed from the checkpoint differs from the full replay; empty when they agree. */
  differences: string[]
  notices: StoreNotice[]
}

/**
 * An open session with an exclusive writer. Every event appended to `session` (through
 * `session.append`) is persisted: appends are batched, and `flush()` is the durability
 * checkpoint — it resolves only once every event appended so far is on disk / committed.
 *
 * `session.append` is refused (nothing committed) with `EVENT_TOO_LARGE` for an event over
 * the store's cap, `SESSION_HANDLE_CLOSED` after `close()`, and the write error
 * (`SESSION_WRITE_FAILED` or `CONCURRENT_APPEND`) once a batch failed.
 */
export interface SessionHandle {
  readonly session: Session
  /** What the store noticed while opening (torn tail dropped, stale lock taken over, …). */
  readonly notices: readonly StoreNotice[]
  /**
   * The folder holding this session's files, when the backend keeps one (JSONL:
   * `$KEEL_HOME/sessions/<id>`). The agent stores oversized tool outputs under it.
   */
  readonly directory?: string
  /** Resolves when every event appended so far is durable; rejects if a write failed. */
  flush(): Promise<void>
  /** Flushes, then releases the writer lock. The session stays readable in memory. */
  close(): Promise<void>
}

/** A storage backend for session logs. Every backend passes the conformance suite. */
export interface SessionStore {
  /** `memory`, `jsonl`, `postgres`. */
  readonly kind: string
  /** Creates and opens a new session for writing. */
  create(init?: CreateSessionInit): Promise<SessionHandle>
  /**
   * Opens an existing session for writing (exclusive). A log whose last turn has no
   * `turn/end` is closed with a synthetic `turn/end { reason: 'interrupted' }` (and the
   * open step with `step/end`), written here.
   */
  open(id: string): Promise<SessionHandle>
  /** Loads a validated session for reading; takes no lock and writes nothing. */
  load(id: string): Promise<Session>
  /**
   * Reads a session without repairing or writing anything, reporting what it noticed.
   * Events before a checkpoint are read on demand as `events` is indexed.
   */
  inspect(id: string): Promise<SessionInspection>
  /**
   * Replays the whole log with every check (no checkpoint, nothing vouched for), checks
   * every integrity record, and compares the state resumed from the latest checkpoint with
   * the replay. Writes nothing. Throws what a load of the log throws when it is corrupt.
   */
  verify(id: string): Promise<SessionVerification>
  /** Header-level data of stored sessions, newest first. */
  list(options?: ListOptions): Promise<SessionSummary[]>
  /** The raw stored artifact (the JSONL text), where the backend keeps one. */
  readRaw(id: string): Promise<string | undefined>
  /**
   * Low-level append of already-formed stored events (`{ type, seq, time, data, … }`,
   * e.g. imported or replicated ones) to a stored session that no handle of this store has
   * open, in one batch. They are validated against the stored log exactly as a load would;
   * a first seq that is not the stored log's next seq gives `ConcurrentAppend` and writes
   * nothing. JSONL takes the writer lock for the duration (`SessionLocked` if held);
   * PostgreSQL refuses a session whose writer lease is live (`SessionLocked`) and fences
   * out an expired holder in the same statement as the write.
   * Returns the next seq.
   */
  append(id: string, events: readonly unknown[]): Promise<number>
  /**
   * Forks a stored session: copies its prefix through `atSeq` (default: all of it) into a
   * new session (`parentSession`, `seedLength`, a `session/end-seed` marker) and returns
   * the new session open for writing.
   */
  fork(id: string, options?: ForkOptions): Promise<SessionHandle>
  /** Closes every open handle (flushing) and releases resources. */
  close(): Promise<void>
}
