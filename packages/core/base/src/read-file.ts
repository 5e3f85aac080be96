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

/**
 * Reads a small text file (a configuration, a preset) that someone else may have put in
 * place — a cloned repository can hold a symbolic link to `/dev/zero`, a user a FIFO. The
 * open never waits (`O_NONBLOCK`), only a regular file is read (`fstat` on the open file),
 * and never more than `maxBytes + 1` bytes: a device is not read without end, a pipe not
 * waited on, a huge file not loaded. Throws what `open` throws otherwise (`EACCES`, …).
 */
export function readBoundedText(path: string, maxBytes: number): BoundedRead {
  let fd: number
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return { kind: 'missing' }
    if (code === 'ELOOP') return { kind: 'not-a-file', what: 'a loop of symbolic links' }
    throw error
  }
  try {
    const st = fstatSync(fd)
    if (!st.isFile()) return { kind: 'not-a-file', what: fileKind(st) }
    if (st.size > maxBytes) return { kind: 'too-large', limit: maxBytes, bytes: st.size }
    const buf = Buffer.allocUnsafe(maxBytes + 1)
    let got = 0
    for (let n = -1; n !== 0 && got < buf.length; got += n) n = readSync(fd, buf, got, buf.length - got, got)
    if (got > maxBytes) return { kind: 'too-large', limit: maxBytes, bytes: got } // it grew since the fstat
    return { kind: 'text', text: buf.toString('utf8', 0, got) }
  } finally {
    closeSync(fd)
  }
}
