import { appendFileSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { appendSampleTurn } from '@keel/store-testkit'
import { afterAll, describe, expect, it } from 'vitest'
import { JsonlStore } from '../src/index.js'
import { tempHome } from './helpers.js'

const home = tempHome()
afterAll(() => rmSync(home, { recursive: true, force: true }))

describe('jsonl list by activity', () => {
  it('reads the last event time back from the end: long lines, a torn tail, a tail without newline', async () => {
    const store = new JsonlStore({ home })
    const handle = await store.create({ id: 'tail', header: { createdAt: 1000 } })
    appendSampleTurn(handle.session)
    const turn = handle.session.lastTurn + 1
    handle.session.append('turn/start', { turn }, { time: 50_000 })
    // a last line far longer than one read chunk
    handle.session.append(
      'turn/end',
      { turn, reason: 'error', error: { code: 'X', message: 'y'.repeat(300_000) } },
      { time: 60_000 },
    )
    await handle.close()
    const activity = async () => (await store.list({ orderBy: 'activity' }))[0]!.lastActivityAt
    expect(await activity()).toBe(60_000)
    const file = store.fileOf('tail')
    const full = readFileSync(file)
    // a torn tail (a crash mid-write) falls back to the line before it
    appendFileSync(file, '{"type":"turn/start","seq":')
    expect(await activity()).toBe(60_000)
    // a complete last line without its newline counts (the loader keeps it too)
    writeFileSync(file, full.subarray(0, full.length - 1))
    expect(await activity()).toBe(60_000)
    // only the header left: createdAt
    truncateSync(file, full.indexOf(10) + 1)
    expect(await activity()).toBe(1000)
  })
})
