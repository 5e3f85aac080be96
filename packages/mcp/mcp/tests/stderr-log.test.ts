import { readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { BoundedLog } from '../src/index.js'
import { dirs } from './helpers.js'

describe('the bounded stderr log', () => {
  it('rotates past its size, keeping one previous file, and keeps a short tail in memory', async () => {
    const { home } = dirs()
    const file = join(home, 'logs', 'srv.log')
    const log = new BoundedLog(file, { maxFileBytes: 1000, tailChars: 100 })
    for (let i = 0; i < 100; i++) log.write(`line ${String(i).padStart(3, '0')} ${'x'.repeat(30)}\n`)
    await log.close()
    expect(statSync(file).size).toBeLessThanOrEqual(1000)
    expect(statSync(`${file}.1`).size).toBeLessThanOrEqual(1000)
    expect(readFileSync(file, 'utf8')).toContain('line 099')
    expect(log.tail(2)).toEqual([`line 098 ${'x'.repeat(30)}`, `line 099 ${'x'.repeat(30)}`])
    expect(log.tail(100).join('\n').length).toBeLessThanOrEqual(100)
  })

  it('a file it cannot write is reported once; the tail still works', async () => {
    const { home } = dirs()
    // A file where its directory should be: no one can create the log there, root included.
    const blocker = join(home, 'blocker')
    writeFileSync(blocker, 'not a directory')
    const problems: string[] = []
    const log = new BoundedLog(join(blocker, 'sub', 'srv.log'), { onError: (m) => problems.push(m) })
    log.write('one\n')
    log.write('two\n')
    await log.close()
    expect(problems).toHaveLength(1)
    expect(problems[0]).toContain('keeping only the last lines in memory')
    expect(log.tail()).toEqual(['one', 'two'])
  })
})
