import { closeSync, fstatSync, openSync, readSync } from 'node:fs'

/** An `ArrayBuffer` that can shrink (ES2024; the compiler's library here predates it). */
type Resizable = ArrayBuffer & { resize(length: number): void }
const ResizableBuffer = ArrayBuffer as unknown as new (
  length: number,
  options: { maxByteLength: number },
) => Resizable

/** A file's bytes, and a way to give their memory back before the garbage collector would. */
export interface ReleasableBytes {
  readonly bytes: Buffer
  /** Frees the bytes now (they read as empty after); later calls do nothing. */
  release(): void
}

/**
 * Reads the whole of `path` into a resizable `ArrayBuffer`, which `release` shrinks to
 * nothing: its pages go back to the system at once, not at some later collection. So a
 * caller that decodes the bytes to text holds the text alone while parsing it. Throws as
 * `readFileSync` does (`ENOENT`, …).
 */
export function readReleasable(path: string): ReleasableBytes {
  const fd = openSync(path, 'r')
  try {
    const size = fstatSync(fd).size
    const memory = new ResizableBuffer(size, { maxByteLength: Math.max(size, 1) })
    const whole = Buffer.from(memory, 0, size)
    let length = 0
    while (length < size) {
      const n = readSync(fd, whole, length, size - length, length)
      if (n === 0) break // the file shrank under the read: what is there
      length += n
    }
    const bytes = whole.subarray(0, length)
    return { bytes, release: () => memory.resize(0) }
  } finally {
    closeSync(fd)
  }
}
