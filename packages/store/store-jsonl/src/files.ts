import { randomBytes } from 'node:crypto'
import {
  closeSync,
  promises as fs,
  lstatSync,
  readdirSync,
  readFileSync,
  rmdirSync,
  unlinkSync,
} from 'node:fs'
import { join } from 'node:path'
import { SESSION_FORMAT_VERSION, type SessionHeader } from '@keel/session'
import { type PendingEvent, SessionCorrupt, StoreIoFailed } from '@keel/store'
import { FORMAT_NAME, MAX_LINE_READ, type PhysicalHeader } from './header.js'
import { openSessionFile } from './regular-file.js'

/**
 * Removes the file at `path`; one already gone is no failure. (`rmSync(path, { force })`
 * does the same through Node's recursive remover, loaded and run on every call.)
 */
export function removeFile(path: string): void {
  try {
    unlinkSync(path)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
}

/** The folder of a session's blobs (spilled events): `<session dir>/blobs/<sha256>.json`. */
export function blobPath(dir: string, sha256: string): string {
  return join(dir, 'blobs', `${sha256}.json`)
}

/** Reads a blob's bytes of session `id`, or undefined when it is missing (one that is not a regular file is `SessionCorrupt`). */
export function readBlob(id: string, dir: string, sha256: string): Buffer | undefined {
  let opened: { fd: number; size: number }
  try {
    opened = openSessionFile(id, blobPath(dir, sha256))
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined // `blobs` missing, or a file
    throw error
  }
  const { fd, size } = opened
  try {
    if (size > MAX_LINE_READ) {
      // its JSON could never be one string: damage (a sparse extension), not an event
      throw new SessionCorrupt(
        id,
        { file: blobPath(dir, sha256) },
        `it is ${size} bytes, more than one event's JSON can be (${MAX_LINE_READ} bytes)`,
      )
    }
    return readFileSync(fd)
  } finally {
    closeSync(fd)
  }
}

export async function fsyncDir(dir: string): Promise<void> {
  const handle = await fs.open(dir, 'r')
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

/** Writes `data` to a fresh temp file `<path>.<random>.tmp`, fsynced; returns the temp path. */
async function writeTemp(path: string, data: string | Buffer): Promise<string> {
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`
  const handle = await fs.open(temp, 'wx')
  try {
    await handle.writeFile(data)
    await handle.sync()
  } catch (error) {
    await handle.close().catch(() => undefined)
    await fs.rm(temp, { force: true })
    throw error
  } finally {
    await handle.close().catch(() => undefined)
  }
  return temp
}

/**
 * Persists the blobs of spilled events durably before any line names them: each is written
 * to a temp file, fsynced, hard-linked to `blobs/<sha256>.json` (an existing one has the
 * same content: blobs are content-addressed) and the folder fsynced.
 */
export async function writeBlobs(dir: string, events: readonly PendingEvent[]): Promise<void> {
  let wrote = false
  for (const item of events) {
    if (!item.blob) continue
    const path = blobPath(dir, item.blob.sha256)
    if (!wrote) await fs.mkdir(join(dir, 'blobs'), { recursive: true })
    const temp = await writeTemp(path, item.blob.json)
    try {
      await fs.link(temp, path)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    } finally {
      await fs.rm(temp, { force: true })
    }
    wrote = true
  }
  if (wrote) {
    await fsyncDir(join(dir, 'blobs'))
    await fsyncDir(dir)
  }
}

/**
 * Writes a complete log (physical header + events, their blobs first) to a fresh temp file
 * `.session.jsonl.<random>.tmp` in `dir` and fsyncs it; the caller links or renames it
 * into place. Returns the temp path.
 */
export async function writeTempLog(
  dir: string,
  header: SessionHeader,
  events: readonly PendingEvent[],
): Promise<string> {
  await writeBlobs(dir, events)
  let text = physicalHeaderLine(header)
  for (const item of events) text += `${item.json}\n`
  return writeTemp(join(dir, '.session.jsonl'), text)
}

/** The first line of a session file (in the current format), newline included. */
export function physicalHeaderLine(header: SessionHeader): string {
  const physical: PhysicalHeader = { format: FORMAT_NAME, formatVersion: SESSION_FORMAT_VERSION, header }
  return `${JSON.stringify(physical)}\n`
}

/** Leftovers of a process killed mid-create/fork/lock/checkpoint: `<name>.<random>.tmp`, stale-lock moves. */
const LEFTOVER =
  /^(?:\.session\.(?:jsonl|checkpoint)\.[0-9a-f]+\.tmp|writer\.lock\.[0-9a-f]+\.tmp|writer\.lock\.stale\.[0-9a-f]+)$/
const BLOB_LEFTOVER = /^[0-9a-f]{64}\.json\.[0-9a-f]+\.tmp$/

/** How old a temp file must be before it counts as a leftover (a live create takes ms). */
export const LEFTOVER_AGE_MS = 10 * 60 * 1000

/**
 * Removes temp files older than `ageMs` that a killed process left in a session folder (and
 * its `blobs/`), then the folder itself if that left it empty (a create that never linked
 * its log). Returns what was removed. Best effort: a file that vanished meanwhile is fine.
 */
export async function cleanLeftovers(dir: string, ageMs: number, now = Date.now()): Promise<string[]> {
  // synchronous: a readdir and a stat or two, not worth a round trip each to the thread pool
  const removed: string[] = []
  const sweep = (folder: string, pattern: RegExp) => {
    let names: string[]
    try {
      names = readdirSync(folder)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT' || code === 'ENOTDIR') return // none, or not a folder: nothing of ours to sweep
      throw error
    }
    for (const name of names) {
      if (!pattern.test(name)) continue
      const path = join(folder, name)
      try {
        const st = lstatSync(path)
        // only files: what else bears a temp name (a folder, a link) was not left by a writer
        if (!st.isFile() || now - st.mtimeMs < ageMs) continue
        removeFile(path)
        removed.push(path)
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      }
    }
  }
  sweep(dir, LEFTOVER)
  sweep(join(dir, 'blobs'), BLOB_LEFTOVER)
  if (removed.length > 0) {
    try {
      rmdirSync(dir) // only succeeds when empty
    } catch {
      // not empty: a session lives here
    }
  }
  return removed
}

/** OS errors that mean "the storage itself refuses", mapped to {@link StoreIoFailed}. */
const STORAGE_ERRNOS = new Set([
  'ENOSPC',
  'EDQUOT',
  'EMFILE',
  'ENFILE',
  'EROFS',
  'EACCES',
  'EPERM',
  'EIO',
  'EFBIG',
])

/** Maps a storage-level OS error to {@link StoreIoFailed}; returns anything else unchanged. */
export function mapIoError(error: unknown, id: string, operation: string): unknown {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  return typeof code === 'string' && STORAGE_ERRNOS.has(code)
    ? new StoreIoFailed(id, operation, error as NodeJS.ErrnoException)
    : error
}
