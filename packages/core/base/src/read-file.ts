import { closeSync, constants, fstatSync, openSync, readSync, type Stats } from 'node:fs'

/** What {@link readBoundedText} found at a path. */
export type BoundedRead =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'missing' }
  /** A directory, FIFO, device, socket, or a loop of symbolic links: nothing was read. */
  | { readonly kind: 'not-a-file'; readonly what: string }
  /** More than the limit (`bytes`: its size, or at least that): nothing past it was read. */
  | { readonly kind: 'too-large'; readonly limit: number; readonly bytes: number }

/** What a path that is not a regular file is, in words: `a directory`, `a FIFO`, … */
export function fileKind(st: Stats): string {
  if (st.isDirectory()) return 'a directory'
  if (st.isFIFO()) return 'a FIFO'
  if (st.isCharacterDevice()) return 'a character device'
  if (st.isBlockDevice()) return 'a block device'
  if (st.isSocket()) return 'a socket'
  return 'not a regular file'
}

/** A path that holds something other than a regular file: a directory, FIFO, device, socket, a symbolic link loop. */
export class NotRegularFile extends Error {
  constructor(
    readonly path: string,
    /** What it is instead, in words: `a directory`, `a FIFO`, … ({@link fileKind}). */
    readonly what: string,
  ) {
    super(`${path} is ${what}, not a regular file`)
    this.name = 'NotRegularFile'
  }
}

/**
 * Opens `path` to read, only if it is a regular file: the open never waits for a FIFO's
 * writer (`O_NONBLOCK`), and what `fstat` on the open descriptor finds not to be a regular
 * file — or a loop of symbolic links — is closed again and refused with
 * {@link NotRegularFile}, so a reader never blocks on a pipe nor reads a device without end.
 * Returns the descriptor (the caller closes it) and the size `fstat` gave. Throws as
 * `openSync` does otherwise (`ENOENT`, `ENOTDIR`, `EACCES`).
 */
export function openRegularFile(path: string): { fd: number; size: number } {
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
  return { fd, size: st.size }
}

/**
 * Reads a small text file (a configuration, a preset) that someone else may have put in
 * place — a cloned repository can hold a symbolic link to `/dev/zero`, a user a FIFO —
 * through {@link openRegularFile}, and never more than `maxBytes + 1` bytes: a device is
 * not read, a pipe not waited on, a huge file not loaded. Throws what `open` throws
 * otherwise (`EACCES`, …).
 */
export function readBoundedText(path: string, maxBytes: number): BoundedRead {
  let opened: { fd: number; size: number }
  try {
    opened = openRegularFile(path)
  } catch (error) {
    if (error instanceof NotRegularFile) return { kind: 'not-a-file', what: error.what }
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' }
    throw error
  }
  const { fd, size } = opened
  try {
    if (size > maxBytes) return { kind: 'too-large', limit: maxBytes, bytes: size }
    const buf = Buffer.allocUnsafe(maxBytes + 1)
    let got = 0
    for (let n = -1; n !== 0 && got < buf.length; got += n) n = readSync(fd, buf, got, buf.length - got, got)
    if (got > maxBytes) return { kind: 'too-large', limit: maxBytes, bytes: got } // it grew since the fstat
    return { kind: 'text', text: buf.toString('utf8', 0, got) }
  } finally {
    closeSync(fd)
  }
}
