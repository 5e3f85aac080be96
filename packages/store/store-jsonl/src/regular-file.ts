import { closeSync, constants, fstatSync, openSync, type Stats } from 'node:fs'
import { fileKind } from '@keel/base'
import { SessionCorrupt } from '@keel/store'

/** A session file's path holds something other than a regular file. */
export class NotRegularFile extends Error {
  constructor(
    readonly path: string,
    /** What it is instead, in words: `a directory`, `a FIFO`, … */
    readonly what: string,
  ) {
    super(`${path} is ${what}, not a regular file`)
    this.name = 'NotRegularFile'
  }
}

/**
 * Opens a session file to read. Opening a FIFO does not wait for a writer (`O_NONBLOCK`),
 * and whatever is not a regular file — a directory, FIFO, device, socket, a loop of
 * symbolic links — is refused with {@link NotRegularFile}: a reader never blocks on a pipe
 * nor reads a device without end. Throws as `openSync` does otherwise (`ENOENT`, `EACCES`).
 */
export function openToRead(path: string): number {
  let fd: number
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ELOOP')
      throw new NotRegularFile(path, 'a loop of symbolic links')
    throw error
  }
  let st: Stats
  try {
    st = fstatSync(fd)
  } catch (error) {
    closeSync(fd)
    throw error
  }
  if (!st.isFile()) {
    closeSync(fd)
    throw new NotRegularFile(path, fileKind(st))
  }
  return fd
}

/** A {@link NotRegularFile} of session `id` as `SessionCorrupt` (naming the file); any other error unchanged. */
export function corruptIfNotRegular(id: string, error: unknown): unknown {
  return error instanceof NotRegularFile
    ? new SessionCorrupt(id, { file: error.path }, `it is ${error.what}, not a regular file`)
    : error
}

/** {@link openToRead} for a file the session cannot be read without: one that is not a regular file is `SessionCorrupt`. */
export function openSessionFile(id: string, path: string): number {
  try {
    return openToRead(path)
  } catch (error) {
    throw corruptIfNotRegular(id, error)
  }
}
