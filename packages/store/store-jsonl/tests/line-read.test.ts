import { closeSync, mkdtempSync, openSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { readThroughNewline } from '../src/line-read.js'

const dir = mkdtempSync(join(tmpdir(), 'keel-line-read-'))

/** Bytes that are mostly not newlines, in runs of any length. */
const bytes = fc
  .array(fc.oneof(fc.constant(10), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 32, max: 126 })), {
    maxLength: 300,
  })
  .map((a) => Buffer.from(a))

describe('reading through to a newline', () => {
  it('gives the carry and the file’s bytes up to a newline, the end of the file, or past max', () => {
    fc.assert(
      fc.property(
        bytes,
        fc.nat(40),
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 1, max: 16 }),
        fc.nat(120),
        (file, cut, first, scan, extra) => {
          // `carry` is bytes of a line already read (never a newline); the file goes on at `pos`
          const carry = Buffer.from('x'.repeat(cut % 7))
          const max = carry.length + first + extra // as the store reads: the first read fits in max
          const pos = Math.min(cut, file.length)
          const path = join(dir, 'f')
          writeFileSync(path, file)
          const fd = openSync(path, 'r')
          try {
            const got = readThroughNewline(fd, carry, pos, first, max, scan)
            const rest = Buffer.concat([carry, file.subarray(pos)])
            const firstNewline = rest.indexOf(10)
            if (got.end === 'too-long') {
              expect(got.length).toBeGreaterThan(max)
              expect(firstNewline === -1 || firstNewline >= max).toBe(true)
              return
            }
            const held = got.buf.subarray(0, got.length)
            expect(held.equals(rest.subarray(0, got.length))).toBe(true)
            expect(got.lastNewline).toBe(held.lastIndexOf(10))
            if (got.end === 'eof') {
              expect(got.length).toBe(rest.length)
              expect(firstNewline).toBe(-1)
            } else {
              expect(firstNewline).toBeGreaterThanOrEqual(0)
              expect(firstNewline).toBeLessThanOrEqual(max) // no line it gives runs past max
            }
          } finally {
            closeSync(fd)
          }
        },
      ),
      { seed: 20261203, numRuns: 2000 },
    )
  })
})
