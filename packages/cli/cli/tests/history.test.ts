import { appendFileSync, mkdirSync, truncateSync, writeFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { HISTORY_SIZE, InputHistory, MAX_HISTORY_SCAN_BYTES } from '../src/tui/history.js'
import { makeFifo, releaseFifos } from './fifo.js'

const CWD = '/work/project'
const line = (text: string, cwd = CWD) => `${JSON.stringify({ text, time: 1, cwd })}\n`

async function history(): Promise<InputHistory> {
  const home = await mkdtemp(join(tmpdir(), 'keel-history-'))
  const h = new InputHistory(home, CWD)
  mkdirSync(join(h.file, '..'), { recursive: true })
  return h
}

afterEach(releaseFifos)

describe('the input history reads back the newest entries only', () => {
  it('gives the entries newest first, without repeats or other projects’, and counts torn lines', async () => {
    const h = await history()
    writeFileSync(h.file, line('one') + line('two') + line('elsewhere', '/other') + line('one'))
    appendFileSync(h.file, '{"text":"torn\n')
    appendFileSync(h.file, 'ünïcode ✓ not json\n')
    appendFileSync(h.file, line('three ✓'))
    expect(await h.load()).toEqual({ entries: ['three ✓', 'one', 'two'], skipped: 2 })
  })

  it('is empty when nothing was sent yet, and keeps what append writes', async () => {
    const h = await history()
    expect(await h.load()).toEqual({ entries: [], skipped: 0 })
    expect(await h.append('first')).toBeUndefined()
    expect(await h.append('second')).toBeUndefined()
    expect(await h.load()).toEqual({ entries: ['second', 'first'], skipped: 0 })
  })

  it('stops at the newest HISTORY_SIZE entries', async () => {
    const h = await history()
    writeFileSync(h.file, Array.from({ length: HISTORY_SIZE + 50 }, (_, i) => line(`entry ${i}`)).join(''))
    const { entries } = await h.load()
    expect(entries).toHaveLength(HISTORY_SIZE)
    expect(entries[0]).toBe(`entry ${HISTORY_SIZE + 49}`)
    expect(entries.at(-1)).toBe('entry 50')
  })

  it('reads only the last MAX_HISTORY_SCAN_BYTES of a file that grew huge, and none of the rest', async () => {
    const h = await history()
    writeFileSync(h.file, line('oldest, beyond the scan'))
    // a sparse hole of 3 GiB: read whole, it would fill the memory (and a string cannot hold it)
    truncateSync(h.file, 3 * 1024 ** 3)
    appendFileSync(h.file, `\n${line('recent')}${line('newest')}`)
    expect(await h.load()).toEqual({ entries: ['newest', 'recent'], skipped: 0 })
    expect(MAX_HISTORY_SCAN_BYTES).toBeLessThan(3 * 1024 ** 3)
  }, 10_000)

  it('keeps a line that straddles two reads whole', async () => {
    const h = await history()
    const long = 'x'.repeat(3 * 1024 * 1024 + 17) // longer than one read of the file
    writeFileSync(h.file, line('before') + line(long) + line('after'))
    expect(await h.load()).toEqual({ entries: ['after', long, 'before'], skipped: 0 })
  })

  it('refuses a FIFO at once instead of waiting for a writer that never comes', async () => {
    const h = await history()
    makeFifo(h.file)
    await expect(h.load()).rejects.toThrow(`${h.file} is a FIFO, not a regular file`)
  }, 5_000)
})
