import { isKeelError } from '@keel/base'
import { MemoryStorage, MemoryStore, type PendingEvent } from '@keel/store'
import { describe, expect, it } from 'vitest'
import { runStoreConformance } from '../src/conformance.js'
import { appendSampleTurn } from '../src/index.js'

runStoreConformance('memory', async () => {
  const storage = new MemoryStorage()
  return {
    store: new MemoryStore({ storage }),
    reopen: (options) => new MemoryStore({ ...options, storage }),
    appendRaw: async (id, events) =>
      storage.appendRawLines(
        id,
        events.map((e) => JSON.stringify(e)),
      ),
    setFormatVersion: async (id, version) => storage.setFormatVersion(id, version),
    patchStoredHeader: async (id, patch) => storage.patchHeader(id, patch),
    damageBlob: async (id, sha256, how) => storage.damageBlob(id, sha256, how),
    checkpointText: async (id) => storage.checkpointOf(id),
    setCheckpointText: async (id, text) => storage.setCheckpoint(id, text),
    editLines: async (id, edit) => storage.setLines(id, edit([...storage.records.get(id)!.lines])),
  }
})

describe('handle batching and write failures (memory backend)', () => {
  it('writes events appended within the window as one batch', async () => {
    const batches: number[] = []
    const store = new MemoryStore({
      batchWindowMs: 20,
      failWrite: (_id, batch) => {
        batches.push(batch.length)
        return undefined
      },
    })
    const handle = await store.create({ id: 'b' })
    appendSampleTurn(handle.session)
    appendSampleTurn(handle.session)
    await handle.flush()
    appendSampleTurn(handle.session)
    expect(batches).toEqual([22]) // not written yet: waiting for the window
    await expect.poll(() => batches.length, { timeout: 5000, interval: 5 }).toBe(2)
    expect(batches).toEqual([22, 11])
    await store.close()
  })

  it('surfaces a failed write on the next flush, keeps failing, refuses further appends', async () => {
    let fail = false
    const written: PendingEvent[][] = []
    const storage = new MemoryStorage()
    const store = new MemoryStore({
      storage,
      failWrite: (_id, batch) => {
        if (fail) return new Error('disk on fire')
        written.push([...batch])
        return undefined
      },
    })
    const handle = await store.create({ id: 'w' })
    appendSampleTurn(handle.session)
    await handle.flush()
    fail = true
    appendSampleTurn(handle.session)
    let error: unknown
    try {
      await handle.flush()
    } catch (e) {
      error = e
    }
    expect(isKeelError(error, 'SESSION_WRITE_FAILED')).toBe(true)
    expect((error as Error).message).toContain('disk on fire')
    expect((error as { details: Record<string, unknown> }).details).toMatchObject({
      firstSeq: 11,
      lastSeq: 21,
    })
    await expect(handle.flush()).rejects.toMatchObject({ code: 'SESSION_WRITE_FAILED' })
    expect(() => appendSampleTurn(handle.session)).toThrow(/accepts no more appends/)
    await expect(handle.close()).rejects.toMatchObject({ code: 'SESSION_WRITE_FAILED' })
    // what was acknowledged is still there, and the lock was released
    const reopened = await new MemoryStore({ storage }).open('w')
    expect(reopened.session.nextSeq).toBe(11)
    await reopened.close()
  })

  it('a write racing a low-level append gets CONCURRENT_APPEND on flush and writes nothing', async () => {
    const storage = new MemoryStorage()
    const store = new MemoryStore({ storage })
    const handle = await store.create({ id: 'race' })
    await handle.flush()
    // another writer sneaks an event in behind the lock (a bug elsewhere, or a manual edit)
    storage.appendRawLines('race', [
      JSON.stringify({ type: 'turn/start', seq: 0, time: 1, data: { turn: 1 } }),
    ])
    appendSampleTurn(handle.session)
    await expect(handle.flush()).rejects.toMatchObject({ code: 'CONCURRENT_APPEND' })
    await handle.close().catch(() => {})
    expect((await store.load('race')).nextSeq).toBe(1)
  })
})

describe('line cap and maximum event size (memory backend)', () => {
  it('spills an event over maxLineBytes to a blob, refuses one over maxEventBytes (UTF-8 bytes) before commit', async () => {
    const storage = new MemoryStorage()
    const store = new MemoryStore({ storage, maxLineBytes: 500, maxEventBytes: 2000 })
    const handle = await store.create({ id: 'caps' })
    const text = (t: string) => ({
      message: { role: 'developer' as const, content: [{ type: 'text' as const, text: t }] },
    })
    handle.session.append('developer/message', text('e'.repeat(1000)))
    expect(() => handle.session.append('developer/message', text('é'.repeat(1000)))).toThrow(
      expect.objectContaining({ code: 'EVENT_TOO_LARGE' }),
    )
    expect(handle.session.nextSeq).toBe(1)
    await handle.close()
    const record = storage.records.get('caps')!
    expect(JSON.parse(record.lines[0]!)).toMatchObject({
      type: 'developer/message',
      seq: 0,
      blob: { bytes: expect.any(Number) },
    })
    expect(record.blobs.size).toBe(1)
    expect(JSON.parse(JSON.stringify((await store.load('caps')).events))).toEqual(
      JSON.parse(JSON.stringify(handle.session.events)),
    )
  })
})
