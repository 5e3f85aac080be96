import { crc32 } from 'node:zlib'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  CHECKPOINT_FORMAT_VERSION,
  CheckpointDecoder,
  type CheckpointDocument,
  decodeCheckpoint,
  encodeCheckpoint,
  MemoryStore,
} from '../src/index.js'

/** A real checkpoint: a session with multi-byte text, closed by a store that checkpoints. */
async function sampleDocument(): Promise<CheckpointDocument> {
  const store = new MemoryStore({ checkpoints: { every: 1, minEvents: 0 } })
  const handle = await store.create({ id: 'cp' })
  for (let turn = 1; turn <= 3; turn++) {
    handle.session.append('turn/start', { turn })
    handle.session.append('user/message', {
      message: {
        role: 'user',
        content: [{ type: 'text', text: `tour ${turn}: déjà vu — ✓ ${'x'.repeat(300)}` }],
      },
    })
    handle.session.append('turn/end', { turn, reason: 'completed' })
  }
  const state = handle.session.checkpoint()
  await handle.close()
  const mark = { seq: 0, next: state.nextSeq, crc: 0, chain: '0'.repeat(64) }
  return JSON.parse(
    JSON.stringify({
      session: 'cp',
      sessionFormat: 1,
      seq: state.nextSeq,
      mark,
      locator: null,
      blobs: [],
      state,
    }),
  ) as CheckpointDocument
}

/** Feeds `bytes` to a decoder in pieces cut at `cuts`. */
function decodeInPieces(bytes: Buffer, cuts: number[], id: string) {
  const decoder = new CheckpointDecoder(id)
  let at = 0
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    decoder.push(bytes.subarray(at, cut))
    at = cut
  }
  decoder.push(bytes.subarray(at))
  return decoder.end()
}

describe('the stored checkpoint', () => {
  it('holds its document on one line and each held event on a line of its own', async () => {
    const doc = await sampleDocument()
    const text = encodeCheckpoint(doc)
    const lines = text.split('\n')
    expect(JSON.parse(lines[0]!)).toMatchObject({
      format: 'keel-checkpoint',
      version: CHECKPOINT_FORMAT_VERSION,
    })
    expect(JSON.parse(lines[1]!).state.events).toBeUndefined()
    expect(lines.slice(2).map((l) => JSON.parse(l))).toEqual(doc.state.events)
    expect(decodeCheckpoint(text, 'cp')).toEqual({ ok: true, doc })
  })

  it('decodes the same from pieces of any size, cut anywhere (inside a character too)', async () => {
    const doc = await sampleDocument()
    const bytes = Buffer.from(encodeCheckpoint(doc))
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: bytes.length }), { maxLength: 40 }), (cuts) => {
        expect(decodeInPieces(bytes, cuts, 'cp')).toEqual({ ok: true, doc })
      }),
      { seed: 22, numRuns: 200 },
    )
  })

  it('refuses a changed byte anywhere, whatever the pieces, and hands out nothing', async () => {
    const bytes = Buffer.from(encodeCheckpoint(await sampleDocument()))
    const headEnd = bytes.indexOf(10)
    fc.assert(
      fc.property(
        fc.integer({ min: headEnd + 1, max: bytes.length - 1 }),
        fc.integer({ min: 1, max: 255 }),
        fc.array(fc.integer({ min: 0, max: bytes.length }), { maxLength: 8 }),
        (at, flip, cuts) => {
          const damaged = Buffer.from(bytes)
          damaged[at]! ^= flip
          expect(decodeInPieces(damaged, cuts, 'cp')).toEqual({
            ok: false,
            reason: 'its content does not match its digest (it was damaged or edited)',
          })
        },
      ),
      { seed: 7, numRuns: 200 },
    )
  })

  it('refuses a checkpoint of the former stored form (one document line) by its version', async () => {
    const body = JSON.stringify(await sampleDocument())
    const head = { format: 'keel-checkpoint', version: 1, bytes: Buffer.byteLength(body), crc32: crc32(body) }
    expect(decodeCheckpoint(`${JSON.stringify(head)}\n${body}`, 'cp')).toEqual({
      ok: false,
      reason: `it has checkpoint format 1; this build reads format ${CHECKPOINT_FORMAT_VERSION}`,
    })
  })

  it('refuses a digest-valid body whose document holds its events inline, or is not JSON', async () => {
    const framed = (body: string) => {
      const head = {
        format: 'keel-checkpoint',
        version: CHECKPOINT_FORMAT_VERSION,
        bytes: Buffer.byteLength(body),
        crc32: crc32(body),
      }
      return `${JSON.stringify(head)}\n${body}`
    }
    const inline = decodeCheckpoint(framed(JSON.stringify(await sampleDocument())), 'cp')
    expect(inline.ok === false && inline.reason).toMatch(/events are not on lines of their own/)
    const broken = decodeCheckpoint(framed('{"session":"cp"}\n{"type":'), 'cp')
    expect(broken.ok === false && broken.reason).toMatch(/^its body is not JSON/)
    const empty = decodeCheckpoint(framed(''), 'cp')
    expect(empty.ok === false && empty.reason).toMatch(/belongs to session undefined/)
  })

  it('tells a truncated, a padded and a foreign file apart', async () => {
    const text = encodeCheckpoint(await sampleDocument())
    expect(decodeCheckpoint(text.slice(0, -10), 'cp')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/truncated or padded/),
    })
    expect(decodeCheckpoint(`${text}\n{}`, 'cp')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/truncated or padded/),
    })
    expect(decodeCheckpoint(text.slice(0, text.indexOf('\n')), 'cp')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/truncated or padded/),
    })
    expect(decodeCheckpoint('x'.repeat(10_000), 'cp')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/foreign format/),
    })
    expect(decodeCheckpoint('{"format":"not-keel"}\n{}', 'cp')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/foreign format/),
    })
  })
})
