import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { readReleasable } from '../src/releasable.js'

describe('readReleasable', () => {
  const dirs: string[] = []
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
  })
  const file = (content: Buffer) => {
    const dir = mkdtempSync(join(tmpdir(), 'keel-releasable-'))
    dirs.push(dir)
    writeFileSync(join(dir, 'f'), content)
    return join(dir, 'f')
  }

  it('reads every byte, then frees them on release', () => {
    const content = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 31) % 256))
    const read = readReleasable(file(content))
    expect(read.bytes.equals(content)).toBe(true)
    read.release()
    read.release()
    expect(read.bytes.length).toBe(0)
  })

  it('reads an empty file', () => {
    const read = readReleasable(file(Buffer.alloc(0)))
    expect(read.bytes.length).toBe(0)
    read.release()
  })

  it('throws as readFileSync does for a missing file', () => {
    expect(() => readReleasable(join(tmpdir(), 'keel-no-such-file-here'))).toThrow(
      expect.objectContaining({ code: 'ENOENT' }),
    )
  })
})
