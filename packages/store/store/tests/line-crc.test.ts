import { crc32 } from 'node:zlib'
import { describe, expect, it } from 'vitest'
import { lineCrc, linesCrc } from '../src/index.js'

/** Seeded lines: ASCII, accented, CJK, emoji (surrogate pairs), empty. */
function lines(seed: number, count: number): string[] {
  const alphabet = ['a', 'Z', '{', '"', '\\', ' ', 'é', 'ß', '中', '😀', '\u2028']
  const out: string[] = []
  let x = seed
  for (let i = 0; i < count; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31
    let line = ''
    for (let k = 0; k < x % 50; k++) line += alphabet[(x >> (k % 20)) % alphabet.length]
    out.push(line)
  }
  return out
}

describe('lineCrc', () => {
  it('is the CRC-32 of the line and its newline, continuing any previous CRC', () => {
    let crc = 0
    for (const line of lines(42, 2000)) {
      const next = lineCrc(line, crc)
      expect(next).toBe(crc32('\n', crc32(line, crc)))
      crc = next
    }
    const all = lines(42, 2000)
    expect(linesCrc(all)).toBe(crc32(`${all.join('\n')}\n`))
  })
})
