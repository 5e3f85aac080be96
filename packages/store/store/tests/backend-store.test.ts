import { isKeelError } from '@keel/base'
import { describe, expect, it } from 'vitest'
import { BackendStore, MemoryStore, type StoreBackend } from '../src/index.js'

/** The real memory backend, with its `close` failing as a connection pool's may. */
function failingClose(inner: StoreBackend): StoreBackend {
  return {
    kind: inner.kind,
    where: inner.where,
    create: (header, initial) => inner.create(header, initial),
    openForWrite: (id) => inner.openForWrite(id),
    read: (id) => inner.read(id),
    appendStored: (id, build) => inner.appendStored(id, build),
    list: (options) => inner.list(options),
    readRaw: (id) => inner.readRaw(id),
    close: async () => {
      throw new Error('pool already ended')
    },
  }
}

describe('BackendStore.close', () => {
  it('reports a handle whose events were not written even when the backend fails to close', async () => {
    let fail = false
    const memory = new MemoryStore({ failWrite: () => (fail ? new Error('disk on fire') : undefined) })
    const store = new BackendStore(failingClose(memory.backend))
    const handle = await store.create({ id: 'lost' })
    handle.session.append('turn/start', { turn: 1 })
    await handle.flush()
    fail = true
    handle.session.append('turn/end', { turn: 1, reason: 'completed' })
    const error = await store.close().then(
      () => undefined,
      (e: unknown) => e,
    )
    // The events that are not durable matter more than the pool that did not end cleanly.
    expect(isKeelError(error, 'SESSION_WRITE_FAILED')).toBe(true)
    expect((error as Error).message).toContain('disk on fire')
  })

  it('reports the backend failing to close when every handle closed cleanly', async () => {
    const memory = new MemoryStore()
    const store = new BackendStore(failingClose(memory.backend))
    const handle = await store.create({ id: 'fine' })
    handle.session.append('turn/start', { turn: 1 })
    await expect(store.close()).rejects.toThrow('pool already ended')
  })
})
