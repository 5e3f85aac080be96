import { createHash } from 'node:crypto'
import type { SessionEvent } from '@keel/session'
import type { BackendStore, PendingEvent } from '@keel/store'
import { describe, expect, it } from 'vitest'
import { PG_URL, pgFixture, sql } from './helpers.js'

/** A pending event stored as a stub line plus its blob, as the store core builds it. */
function blobbed(event: SessionEvent): PendingEvent {
  const json = JSON.stringify(event)
  const sha256 = createHash('sha256').update(json).digest('hex')
  const stub = {
    type: event.type,
    seq: event.seq,
    time: event.time,
    blob: { sha256, bytes: Buffer.byteLength(json) },
  }
  return { event, json: JSON.stringify(stub), blob: { sha256, json } }
}

const plain = (event: SessionEvent): PendingEvent => ({ event, json: JSON.stringify(event) })

const big = 'b'.repeat(50_000) + '\u0000\ud800'

function events(): SessionEvent[] {
  return [
    { type: 'turn/start', seq: 0, time: 1, data: { turn: 1 } },
    {
      type: 'user/message',
      seq: 1,
      time: 2,
      data: { message: { role: 'user', content: [{ type: 'text', text: big }] } },
    },
    { type: 'turn/end', seq: 2, time: 3, data: { turn: 1, reason: 'completed' } },
  ] as unknown as SessionEvent[]
}

describe.skipIf(!PG_URL)('postgres: blobs beside the log', () => {
  it('writes a blob in the same statement as its stub and resolves it on load', async () => {
    const f = await pgFixture('blob')
    try {
      const backend = (f.store as BackendStore).backend
      await (await f.store.create({ id: 'b' })).close()
      const { writer } = await backend.openForWrite('b')
      const [start, message, end] = events()
      const pending = blobbed(message!)
      // a blob already stored (a retried write) is no conflict
      await sql(`INSERT INTO ${f.schema}.blobs (session_id, sha256, json) VALUES ('b', $1, $2)`, [
        pending.blob!.sha256,
        pending.blob!.json,
      ])
      await writer.append([plain(start!), pending, plain(end!)])
      await writer.close()
      const rows = await sql<{ line: string }>(`SELECT line FROM ${f.schema}.events WHERE seq = 1`)
      expect(rows[0]!.line.length).toBeLessThan(300)
      const loaded = await f.store.load('b')
      expect(loaded.events[1]).toEqual(message)
      expect(loaded.nextSeq).toBe(3)
    } finally {
      await f.store.close()
      await f.cleanup?.()
    }
  })

  it('a missing or altered blob is SESSION_CORRUPT naming seq and blob', async () => {
    const f = await pgFixture('blobx')
    try {
      const backend = (f.store as BackendStore).backend
      await (await f.store.create({ id: 'b' })).close()
      const { writer } = await backend.openForWrite('b')
      const [start, message, end] = events()
      const pending = blobbed(message!)
      await writer.append([plain(start!), pending, plain(end!)])
      await writer.close()
      await sql(`UPDATE ${f.schema}.blobs SET json = replace(json, 'bbbb', 'cccc')`)
      await expect(f.store.load('b')).rejects.toMatchObject({
        code: 'SESSION_CORRUPT',
        details: { seq: 1 },
        message: expect.stringContaining(`blob ${pending.blob!.sha256} of seq 1 has digest`),
      })
      await sql(`DELETE FROM ${f.schema}.blobs`)
      await expect(f.store.load('b')).rejects.toMatchObject({
        code: 'SESSION_CORRUPT',
        details: { seq: 1, file: `${f.schema}.blobs` },
        message: expect.stringContaining(`blob ${pending.blob!.sha256} of seq 1 is missing`),
      })
    } finally {
      await f.store.close()
      await f.cleanup?.()
    }
  })

  it('a batch refused by the seq guard stores no blob', async () => {
    const f = await pgFixture('blobr')
    try {
      const backend = (f.store as BackendStore).backend
      await (await f.store.create({ id: 'b' })).close()
      const { writer } = await backend.openForWrite('b')
      const [, message] = events()
      await expect(writer.append([blobbed(message!)])).rejects.toMatchObject({ code: 'CONCURRENT_APPEND' })
      await writer.close()
      expect(await sql(`SELECT 1 FROM ${f.schema}.blobs`)).toHaveLength(0)
    } finally {
      await f.store.close()
      await f.cleanup?.()
    }
  })
})
