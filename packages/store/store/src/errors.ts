import { errorMessage, KeelError, previewJson } from '@keel/base'
import { sessionIdSchema } from '@keel/session'

/** Where in a stored artifact something was found: file and line for JSONL, a table for SQL. */
export interface StoreLocation {
  /** The file (JSONL) or `schema.table` (PostgreSQL). */
  file?: string
  /** 1-based line number (the physical header is line 1). */
  line?: number
  /** Byte offset of the start of that line. */
  offset?: number
  /** The event seq involved, when known. */
  seq?: number
}

/** Who holds a session's writer lock. */
export interface LockHolder {
  pid?: number
  host?: string
  /** When the lock was taken, Unix ms. */
  since?: number
}

/** No session with that id is stored here. */
export class SessionNotFound extends KeelError<'SESSION_NOT_FOUND'> {
  constructor(id: string, where: string) {
    super(
      'SESSION_NOT_FOUND',
      `session ${id} not found in ${where}; check the id (\`list\` shows stored sessions)`,
      {
        id,
        where,
      },
    )
  }
}

/** `create` with an id that is already stored. */
export class SessionExists extends KeelError<'SESSION_EXISTS'> {
  constructor(id: string, where: string) {
    super('SESSION_EXISTS', `session ${id} already exists in ${where}; open it, or create with another id`, {
      id,
      where,
    })
  }
}

/** Another writer holds the session open (one writer per session). */
export class SessionLocked extends KeelError<'SESSION_LOCKED'> {
  constructor(id: string, holder: LockHolder, hint: string) {
    const who =
      holder.pid !== undefined
        ? `process ${holder.pid} on ${holder.host ?? 'an unknown host'}`
        : (holder.host ?? 'another writer')
    super('SESSION_LOCKED', `session ${id} is open for writing by ${who}; ${hint}`, { id, holder })
  }
}

/** Stored data that cannot be read as a valid session: names the file, line and reason. */
export class SessionCorrupt extends KeelError<'SESSION_CORRUPT'> {
  constructor(id: string, location: StoreLocation, reason: string, options?: { cause?: unknown }) {
    const at = [
      location.file,
      location.line !== undefined ? `line ${location.line}` : undefined,
      location.offset !== undefined ? `byte ${location.offset}` : undefined,
    ]
      .filter((p) => p !== undefined)
      .join(', ')
    super(
      'SESSION_CORRUPT',
      `session ${id} is corrupt${at ? ` at ${at}` : ''}: ${reason}. Nothing was changed; ${location.line === undefined && location.offset === undefined ? 'inspect that file, or move it aside' : 'inspect or repair that line by hand (the rest of the log is intact)'}`,
      { id, ...location, reason },
      options,
    )
  }
}

/**
 * The stored format version cannot be read by this build. `direction` is `newer` when a
 * newer Keel wrote it (upgrade Keel), `no-migration` when it is older and no migration
 * chain reaches the current version, and `invalid` when it is not a positive integer.
 */
export class SessionFormatUnsupported extends KeelError<'SESSION_FORMAT_UNSUPPORTED'> {
  constructor(
    id: string,
    found: unknown,
    supported: number,
    direction: 'newer' | 'no-migration' | 'invalid',
    where: string,
    options?: { cause?: unknown },
  ) {
    super(
      'SESSION_FORMAT_UNSUPPORTED',
      direction === 'newer'
        ? `session ${id} (${where}) has format version ${String(found)}, written by a newer Keel; this build reads up to version ${supported}. Upgrade Keel to open it`
        : direction === 'invalid'
          ? `session ${id} (${where}) has format version ${previewJson(found, 80)} (${typeof found}), which is not a version number: it must be a positive integer such as ${supported}. The header was damaged or written by another program`
          : `session ${id} (${where}) has format version ${String(found)} and no registered migration leads from it to version ${supported}; it cannot be opened by this build`,
      { id, found, supported, direction, where },
      options,
    )
  }
}

/** A stored event whose type this build does not know and that is not marked ignorable. */
export class UnknownRequiredEvent extends KeelError<'UNKNOWN_REQUIRED_EVENT'> {
  constructor(id: string, type: string, seq: number, location: StoreLocation, options?: { cause?: unknown }) {
    super(
      'UNKNOWN_REQUIRED_EVENT',
      `session ${id}: event '${type}' at seq ${seq}${location.line !== undefined ? ` (line ${location.line})` : ''} is unknown to this build and not ignorable; load the plugin that owns it or upgrade Keel`,
      { id, type, seq, ...location },
      options,
    )
  }
}

/** A batch whose first seq is not the next seq of the stored log: another writer got there first. */
export class ConcurrentAppend extends KeelError<'CONCURRENT_APPEND'> {
  constructor(id: string, expectedSeq: number, storedNext: number | undefined, found?: string) {
    super(
      'CONCURRENT_APPEND',
      `session ${id}: a batch starting at seq ${expectedSeq} conflicts with ${found ?? (storedNext === undefined ? 'an event another writer stored' : `the stored log, whose next seq is ${storedNext}`)}; nothing of the batch was written. Reload the session before appending again`,
      { id, expectedSeq, storedNext, ...(found === undefined ? {} : { found }) },
    )
  }
}

/** An event whose JSON exceeds the maximum event size; refused before it was committed. */
export class EventTooLarge extends KeelError<'EVENT_TOO_LARGE'> {
  constructor(id: string, type: string, seq: number, bytes: number, limit: number) {
    super(
      'EVENT_TOO_LARGE',
      `session ${id}: event '${type}' (seq ${seq}) is ${bytes} bytes as JSON, over the ${limit}-byte maximum event size (\`maxEventBytes\`); store large outputs beside the log (tool results carry \`storedAside\`) and append a reference`,
      { id, type, seq, bytes, limit },
    )
  }
}

/**
 * Writing a batch failed; the handle accepts no more appends. Surfaces on the next `flush()`.
 * With `retry` (the store was only unavailable) the events are kept instead: the handle
 * still accepts appends and the next `flush()` writes them once the server is back.
 */
export class SessionWriteFailed extends KeelError<'SESSION_WRITE_FAILED'> {
  constructor(id: string, firstSeq: number, lastSeq: number, options?: { cause?: unknown; retry?: boolean }) {
    const cause = options?.cause
    const retry = options?.retry === true
    super(
      'SESSION_WRITE_FAILED',
      `session ${id}: writing events ${firstSeq}..${lastSeq} failed (${errorMessage(cause)}); ${
        retry
          ? 'they are not durable yet: they are kept, and the next flush() writes them once the store is back (or close the handle and reopen the session: the log keeps every event flushed before)'
          : 'they are not durable and the handle accepts no more appends. Close it and reopen the session (the log keeps every event flushed before)'
      }`,
      { id, firstSeq, lastSeq, ...(retry ? { retry } : {}) },
      cause === undefined ? undefined : { cause },
    )
  }
}

/** An append to a session whose handle was closed. */
export class SessionHandleClosed extends KeelError<'SESSION_HANDLE_CLOSED'> {
  constructor(id: string) {
    super(
      'SESSION_HANDLE_CLOSED',
      `session ${id}: its store handle is closed; open the session again to append`,
      {
        id,
      },
    )
  }
}

const IO_HINTS: Record<string, string> = {
  ENOSPC: 'the disk is full; free space and retry',
  EDQUOT: 'the disk quota is exhausted; free space and retry',
  EMFILE: 'this process has too many open files; close some sessions or raise `ulimit -n`',
  ENFILE: 'the system has too many open files; retry later',
  EROFS: 'the file system is read-only; point KEEL_HOME at a writable place',
  EACCES: 'permission denied; check the owner and mode of the store folder',
  EPERM: 'operation not permitted; check the owner and mode of the store folder',
  EIO: 'the disk reported an I/O error',
  EFBIG: 'the file would exceed the file size limit',
}

/**
 * The file system refused an operation that is not an append batch (create, fork, open,
 * rewrite): a full disk, a read-only mount, too many open files. Nothing partial is left;
 * `details.errno` is the OS code. (A failed append batch is `SessionWriteFailed`.)
 */
export class StoreIoFailed extends KeelError<'STORE_IO_FAILED'> {
  constructor(id: string, operation: string, cause: NodeJS.ErrnoException) {
    super(
      'STORE_IO_FAILED',
      `session ${id}: ${operation} failed with ${cause.code} (${IO_HINTS[cause.code ?? ''] ?? cause.message}); nothing partial was left behind`,
      { id, operation, errno: cause.code, path: cause.path },
      { cause },
    )
  }
}

/**
 * A session id that is not one (`sessionIdSchema`: 1–128 of `A-Z a-z 0-9 . _ -`, no leading
 * dot): refused at every entry of a store, before it reaches a path or a query. The
 * message shows the id bounded and escaped (it may hold NUL, `/` or a megabyte).
 */
export class SessionIdInvalid extends KeelError<'SESSION_ID_INVALID'> {
  constructor(id: unknown, where: string) {
    const shown = previewJson(id, 160)
    super(
      'SESSION_ID_INVALID',
      `${shown} is not a session id (1–128 of A-Z a-z 0-9 . _ -, no leading dot), so no session of ${where} has it; check the id (\`list\` shows stored sessions)`,
      { id: shown, where },
    )
  }
}

/** Throws {@link SessionIdInvalid} unless `id` is a valid session id. */
export function checkSessionId(id: unknown, where: string): asserts id is string {
  if (!sessionIdSchema.safeParse(id).success) throw new SessionIdInvalid(id, where)
}

/**
 * The storage server could not be used: it refused or dropped the connection, did not
 * answer within the store's timeouts, was shutting down or starting up, had no connection
 * to spare, or refused the login. `details`: `where` (server, without credentials),
 * `operation`, `reason`, `transient` (worth retrying once the server is back: every reason
 * but a refused login), and the driver's `errno` or `sqlstate`; `cause` is the driver's
 * error. Nothing the store acknowledged is lost: a statement is atomic, and one whose
 * answer never came either committed whole or not at all.
 */
export class StoreUnavailable extends KeelError<'STORE_UNAVAILABLE'> {
  constructor(
    message: string,
    details: { where: string; operation: string; reason: string; transient: boolean } & Record<
      string,
      unknown
    >,
    options?: { cause?: unknown },
  ) {
    super('STORE_UNAVAILABLE', message, details, options)
  }

  /** Whether the operation may succeed if retried once the server is back. */
  get transient(): boolean {
    return this.details.transient === true
  }
}

/**
 * The storage server refused a statement for a reason other than availability (a
 * permission, a schema changed by hand). `details.sqlstate` names it; nothing was changed.
 */
export class StoreQueryFailed extends KeelError<'STORE_QUERY_FAILED'> {
  constructor(
    message: string,
    details: { where: string; operation: string } & Record<string, unknown>,
    options?: { cause?: unknown },
  ) {
    super('STORE_QUERY_FAILED', message, details, options)
  }
}

/** Every error code the storage layer throws. */
export type StoreErrorCode =
  | 'SESSION_NOT_FOUND'
  | 'SESSION_EXISTS'
  | 'SESSION_LOCKED'
  | 'SESSION_CORRUPT'
  | 'SESSION_FORMAT_UNSUPPORTED'
  | 'UNKNOWN_REQUIRED_EVENT'
  | 'CONCURRENT_APPEND'
  | 'EVENT_TOO_LARGE'
  | 'SESSION_WRITE_FAILED'
  | 'SESSION_HANDLE_CLOSED'
  | 'STORE_IO_FAILED'
  | 'SESSION_ID_INVALID'
  | 'STORE_UNAVAILABLE'
  | 'STORE_QUERY_FAILED'
