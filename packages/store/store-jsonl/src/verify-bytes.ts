import { type IntegrityStart, RecordVerifier } from '@keel/store'
import type { FileMark } from './chain.js'

/**
 * A `RecordVerifier` fed the bytes of a session file as they stream by: each record's
 * CRC-32 over its byte range, computed over whole pieces of the read buffer (a few calls
 * per 1 MiB chunk, not one per line).
 */
export class ByteVerifier extends RecordVerifier<FileMark> {
  constructor(id: string, file: string, start: IntegrityStart, marks: readonly FileMark[], strict: boolean) {
    super(id, (mark) => `${file} bytes ${mark.start}..${mark.end}`, start, marks, strict)
  }

  /** Feeds `buf[from, to)`, the file's bytes at `offset`, in file order. */
  feed(buf: Uint8Array, from: number, to: number, offset: number): void {
    let at = from
    while (at < to) {
      const mark = this.current
      if (!mark) {
        this.add(buf.subarray(at, to))
        return
      }
      const end = Math.min(to, from + (mark.end - offset))
      this.add(buf.subarray(at, end))
      at = end
      if (offset + (end - from) === mark.end) this.ended(mark)
    }
  }
}
