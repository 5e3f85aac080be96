import { describe, expect, it } from 'vitest'
import { MemoryStore, StoreUnavailable } from '../src/index.js'

const unavailable = () =>
  new StoreUnavailable('the server is restarting', {
    where: 'memory',
    operation: 'append',
    reason: 'restarting',
    transient: true,
  })

describe('a batch retried after a transient outage', () => {
  it('keeps its place in the integrity chain: the log verifies and resumes from its checkpoint', async () => {
    let outages = 0
    const store = new MemoryStore({
      checkpoints: { every: 1, minEvents: 0 },
      failWrite: () => {
        if (outages === 0) return undefined
        outages--
        return unavailable()
      },
    })
    const handle = await store.create({ id: 'retried' })
    handle.session.append('turn/start', { turn: 1 })
    handle.session.append('turn/end', { turn: 1, reason: 'completed' })
    outages = 2
    await expect(handle.flush()).rejects.toMatchObject({ code: 'SESSION_WRITE_FAILED' })
    // still accepted while the store is away, and written with the kept batch
    handle.session.append('turn/start', { turn: 2 })
    await expect(handle.flush()).rejects.toMatchObject({ code: 'SESSION_WRITE_FAILED' })
    handle.session.append('turn/end', { turn: 2, reason: 'completed' })
    await handle.flush()
    await handle.close()
    const report = await store.verify('retried')
    expect(report.differences).toEqual([])
    expect(report.coveredTo).toBe(4)
    expect(report.checkpoint?.usable).toBe(true)
    const resumed = await store.load('retried')
    expect(resumed.nextSeq).toBe(4)
    expect(resumed.residentFrom).toBe(4)
  })
})
