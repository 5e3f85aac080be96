import { readSync } from 'node:fs'

/** What {@link readThroughNewline} read. */
export type ReadThrough =
  | {
      /** A newline was read (`lastNewline` ≥ 0), or the file ended (`lastNewline` is -1). */
      readonly end: 'newline' | 'eof'
      /** The `carry` bytes, then the bytes read. */
      readonly buf: Buffer
      /** Bytes of `buf` that hold data: `carry.length` plus the bytes read. */
      readonly length: number
      /** Index in `buf` of its last newline, -1 when it holds none. */
      readonly lastNewline: number
    }
  /** More than `max` bytes hold no newline: nothing of them is kept. */
  | { readonly end: 'too-long'; readonly length: number }

/** Bytes searched at a time for the end of a line longer than the first read. */
const SCAN_BYTES = 8 * 1024 * 1024

/**
 * Reads from `fd` at `pos` — where the `carry` bytes a previous read left (the start of a
 * line, no newline in them) end — until what it holds has a newline or the file ends. The
 * usual case is one read of `first` bytes into a buffer that begins with `carry`. For a
 * longer line it first finds where the line ends, searching parts of `scan` bytes ({@link SCAN_BYTES}) that
 * are dropped once searched, then reads it whole into one buffer: memory is bounded by the
 * longest line there is, and a run of bytes without a newline (a damaged or sparsely extended
 * file) costs one pass over at most `max` bytes and no memory. `carry.length + first` is at
 * most `max` (the first read is taken whole).
 */
export function readThroughNewline(
  fd: number,
  carry: Buffer,
  pos: number,
  first: number,
  max: number,
  scan = SCAN_BYTES,
): ReadThrough {
  const head = Buffer.allocUnsafe(carry.length + first)
  carry.copy(head, 0)
  const read = readSync(fd, head, carry.length, first, pos)
  let length = carry.length + read
  const lastNewline = read === 0 ? -1 : head.lastIndexOf(10, length - 1)
  if (lastNewline !== -1) return { end: 'newline', buf: head, length, lastNewline }
  if (read === 0) return { end: 'eof', buf: head, length, lastNewline }
  const part = Buffer.allocUnsafe(scan)
  for (let n = -1; n !== 0; ) {
    if (length > max) return { end: 'too-long', length }
    n = readSync(fd, part, 0, Math.min(part.length, max + 1 - length), pos + length - carry.length)
    length += n
    if (n > 0 && part.lastIndexOf(10, n - 1) !== -1) break
  }
  const buf = Buffer.allocUnsafe(length)
  head.copy(buf, 0, 0, carry.length + read)
  let got = carry.length + read
  for (let n = -1; n !== 0 && got < length; got += n)
    n = readSync(fd, buf, got, length - got, pos + got - carry.length)
  const last = buf.lastIndexOf(10, got - 1) // where the search found it, unless the file changed meanwhile
  return { end: last === -1 ? 'eof' : 'newline', buf, length: got, lastNewline: last }
}
