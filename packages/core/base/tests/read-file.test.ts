import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { readBoundedText } from '../src/index.js'

const root = mkdtempSync(join(tmpdir(), 'keel-read-file-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))
const at = (name: string) => join(root, name)

describe('readBoundedText', () => {
  it('reads a small regular file, through a symbolic link too', () => {
    writeFileSync(at('a.json'), '{"ok":true}')
    symlinkSync(at('a.json'), at('link.json'))
    expect(readBoundedText(at('a.json'), 100)).toEqual({ kind: 'text', text: '{"ok":true}' })
    expect(readBoundedText(at('link.json'), 100)).toEqual({ kind: 'text', text: '{"ok":true}' })
    expect(readBoundedText(at('a.json'), 11)).toEqual({ kind: 'text', text: '{"ok":true}' })
  })

  it('a missing file, or one under a file, is missing', () => {
    expect(readBoundedText(at('nope.json'), 100)).toEqual({ kind: 'missing' })
    writeFileSync(at('plain'), 'x')
    expect(readBoundedText(join(at('plain'), 'under.json'), 100)).toEqual({ kind: 'missing' })
  })

  it('refuses what is not a regular file without reading it: a directory, a FIFO, a device, a loop', () => {
    mkdirSync(at('dir'))
    execFileSync('mkfifo', [at('fifo')]) // no writer: an open that waited would never return
    symlinkSync('/dev/zero', at('zero')) // endless: a read to the end would never return
    symlinkSync(at('loop'), at('loop'))
    expect(readBoundedText(at('dir'), 100)).toEqual({ kind: 'not-a-file', what: 'a directory' })
    expect(readBoundedText(at('fifo'), 100)).toEqual({ kind: 'not-a-file', what: 'a FIFO' })
    expect(readBoundedText(at('zero'), 100)).toEqual({ kind: 'not-a-file', what: 'a character device' })
    expect(readBoundedText(at('loop'), 100)).toEqual({ kind: 'not-a-file', what: 'a loop of symbolic links' })
  })

  it('refuses a file over the limit, a sparse terabyte included, reading none of it', () => {
    writeFileSync(at('big'), '')
    truncateSync(at('big'), 2 ** 40)
    expect(readBoundedText(at('big'), 1024)).toEqual({ kind: 'too-large', limit: 1024, bytes: 2 ** 40 })
    writeFileSync(at('twelve'), '123456789012')
    expect(readBoundedText(at('twelve'), 11)).toEqual({ kind: 'too-large', limit: 11, bytes: 12 })
  })
})
