import { isKeelError, MAX_JSON_DEPTH } from '@keel/base'
import type { Session, SessionHeaderInit, ToolCallId } from '@keel/session'
import { type SessionStore, type StoreNotice, sha256Hex } from '@keel/store'
import { expect, it } from 'vitest'
import { type ConformanceFixture, expectCode, plain, rejection, thrown } from './conformance.js'
import { appendSampleTurn, SAMPLE_TURN_EVENTS as N } from './sample.js'

/** `depth` levels of arrays around a 1 (built iteratively: no recursion). */
export function nested(depth: number): unknown {
  let value: unknown = 1
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

/**
 * A turn whose assistant message carries a `write_file` call with `bytes` of content (over
 * the 1 MiB line cap), its `tool/call`, a result and the turn end. Returns the JSON of the
 * assistant message event, whose digest addresses its blob.
 */
export function appendBigWriteTurn(session: Session, bytes = 1_200_000): string {
  const turn = session.lastTurn + 1
  const callId = `write-${turn}` as ToolCallId
  const line = 'const value = "big file ✓ é";\n'
  const content = line.repeat(Math.ceil(bytes / Buffer.byteLength(line)))
  const args = JSON.stringify({ path: 'src/generated.ts', content })
  session.append('turn/start', { turn })
  session.append('user/message', {
    message: { role: 'user', content: [{ type: 'text', text: 'generate the file' }] },
  })
  session.append('step/start', { turn, step: 1 })
  const message = session.append('assistant/message', {
    turn,
    step: 1,
    message: {
      role: 'assistant',
      content: [{ type: 'tool-call', id: callId, name: 'write_file', arguments: args }],
    },
    stream: { provider: 'sample', model: 'sample-model', startedAt: 1, endedAt: 2, chunks: 900 },
  })
  session.append('tool/call', { turn, step: 1, callId, name: 'write_file', arguments: args })
  session.append('tool/result', {
    turn,
    step: 1,
    message: {
      role: 'tool',
      toolCallId: callId,
      toolName: 'write_file',
      content: [{ type: 'text', text: 'ok' }],
    },
  })
  session.append('step/end', { turn, step: 1 })
  session.append('turn/end', { turn, reason: 'completed' })
  return JSON.stringify(message)
}

/** Events appended by {@link appendBigWriteTurn}. */
export const BIG_WRITE_TURN_EVENTS = 8

/**
 * Conformance cases for hostile input and large events: blobs, NUL and lone surrogates,
 * `__proto__` keys, nesting depth, header validation and event times.
 */
export function hardeningCases(
  fixture: () => Promise<ConformanceFixture>,
  reopen: (f: ConformanceFixture) => Promise<SessionStore>,
): void {
  it('persists an event over the line cap whole (a 1.2 MB write_file call), through reload, reopen and fork', async () => {
    const f = await fixture()
    const handle = await f.store.create({ id: 'blob' })
    appendSampleTurn(handle.session)
    appendBigWriteTurn(handle.session)
    appendSampleTurn(handle.session)
    await handle.close()
    const other = await reopen(f)
    const loaded = await other.load('blob')
    expect(plain(loaded)).toEqual(plain(handle.session))
    expect(loaded.deriveMessages()).toEqual(handle.session.deriveMessages())
    // reopened for writing (and appended to) it stays whole
    const again = await other.open('blob')
    appendBigWriteTurn(again.session, 1_500_000)
    await again.close()
    expect(plain(await f.store.load('blob'))).toEqual(plain(again.session))
    // a fork carries the blobs into the child
    const child = await f.store.fork('blob', { childId: 'blob-child' })
    await child.close()
    const copied = await (await reopen(f)).load('blob-child')
    expect(plain(copied).slice(0, again.session.nextSeq)).toEqual(plain(again.session))
  })

  it('refuses a missing or altered blob with SESSION_CORRUPT naming the seq and the blob', async (ctx) => {
    const f = await fixture()
    if (!f.damageBlob) return ctx.skip('this fixture cannot damage blobs')
    for (const how of ['missing', 'altered'] as const) {
      const id = `blob-${how}`
      const handle = await f.store.create({ id })
      appendSampleTurn(handle.session)
      const json = appendBigWriteTurn(handle.session)
      await handle.close()
      const sha256 = sha256Hex(json)
      await f.damageBlob(id, sha256, how)
      for (const attempt of [() => f.store.load(id), () => f.store.open(id)]) {
        const error = await rejection(attempt())
        expectCode(error, 'SESSION_CORRUPT')
        expect((error as { details: Record<string, unknown> }).details).toMatchObject({ seq: N + 3 })
        expect((error as Error).message).toContain(sha256)
      }
    }
  })

  it('concurrent creates of one id: exactly one wins, the others get SESSION_EXISTS', async () => {
    const f = await fixture()
    const stores = [f.store, await reopen(f), await reopen(f), await reopen(f)]
    const results = await Promise.allSettled(stores.map((s) => s.create({ id: 'raced' })))
    const won = results.filter((r) => r.status === 'fulfilled')
    expect(won).toHaveLength(1)
    for (const r of results) if (r.status === 'rejected') expectCode(r.reason, 'SESSION_EXISTS')
    const handle = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<SessionStore['create']>>>).value
    appendSampleTurn(handle.session)
    await handle.close()
    expect((await (await reopen(f)).load('raced')).nextSeq).toBe(N)
  })

  it('stores text with NUL characters and lone surrogates faithfully', async () => {
    const f = await fixture()
    const handle = await f.store.create({ id: 'nul', header: { title: 'a\u0000b', cwd: '/w\u0000' } })
    const texts = ['out\u0000put', 'lone \ud800 high', 'lone \udfff low', '\u0000', 'pair 😀 \ud83d\ude00 ok']
    handle.session.append('developer/message', {
      message: { role: 'developer', content: texts.map((text) => ({ type: 'text' as const, text })) },
    })
    await handle.close()
    const loaded = await (await reopen(f)).load('nul')
    expect(loaded.header).toEqual(handle.session.header)
    const content = (loaded.events[0]!.data as { message: { content: { text: string }[] } }).message.content
    expect(content.map((c) => c.text)).toEqual(texts)
  })

  it('keeps own __proto__ keys as data, the same in memory and after reload', async () => {
    const f = await fixture()
    const handle = await f.store.create({ id: 'proto' })
    appendSampleTurn(handle.session)
    await handle.close()
    const data = JSON.parse('{"__proto__":{"polluted":true},"kept":[{"__proto__":1}]}') as object
    // through the validated low-level append …
    await f.store.append('proto', [{ type: 'elsewhere/note', seq: N, time: 1, data, ignorable: true }])
    // … and written as stored lines
    await f.appendRaw('proto', [{ type: 'elsewhere/note', seq: N + 1, time: 2, data, ignorable: true }])
    const loaded = await (await reopen(f)).load('proto')
    for (const seq of [N, N + 1]) {
      const stored = loaded.events[seq]!.data as Record<string, unknown>
      const own = (o: unknown, key: string) => Object.getOwnPropertyDescriptor(o, key)?.value as unknown
      expect(Object.getPrototypeOf(stored)).toBe(Object.prototype)
      expect(Object.keys(stored).sort()).toEqual(['__proto__', 'kept']) // key order is the store's
      expect(own(stored, '__proto__')).toEqual({ polluted: true })
      expect(own((stored.kept as unknown[])[0], '__proto__')).toBe(1)
    }
    expect(({} as { polluted?: boolean }).polluted).toBeUndefined()
  })

  it(`limits nesting to ${MAX_JSON_DEPTH} levels: a typed error on append and on load`, async () => {
    const f = await fixture()
    const handle = await f.store.create({ id: 'deep' })
    for (const depth of [3000, MAX_JSON_DEPTH + 1]) {
      const live = thrown(() =>
        handle.session.append('turn/start', { turn: 1, deep: nested(depth) } as never),
      )
      expectCode(live, 'NON_JSON_DATA')
      expect((live as Error).message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`)
    }
    appendSampleTurn(handle.session)
    await handle.close()
    const imported = await rejection(
      f.store.append('deep', [
        { type: 'elsewhere/note', seq: N, time: 1, data: nested(3000), ignorable: true },
      ]),
    )
    expectCode(imported, 'NON_JSON_DATA')
    await f.appendRaw('deep', [
      { type: 'elsewhere/note', seq: N, time: 1, data: nested(900), ignorable: true },
    ])
    const stored = await rejection(f.store.load('deep'))
    expectCode(stored, 'SESSION_CORRUPT')
    expect((stored as { details: Record<string, unknown> }).details).toMatchObject({ seq: N })
    expect((stored as Error).message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`)
  })

  it('validates header fields when creating and when loading', async () => {
    const f = await fixture()
    const bad = await rejection(
      f.store.create({ id: 'hdr-bad', header: { createdAt: 'yesterday' } as unknown as SessionHeaderInit }),
    )
    expectCode(bad, 'HEADER_INVALID')
    expect((bad as Error).message).toContain('createdAt')
    expectCode(await rejection(f.store.load('hdr-bad')), 'SESSION_NOT_FOUND')
    if (!f.patchStoredHeader) return
    const handle = await f.store.create({ id: 'hdr' })
    appendSampleTurn(handle.session)
    await handle.close()
    const cases: [Record<string, unknown>, string][] = [
      [{ createdAt: 'yesterday' }, 'createdAt'],
      [{ createdAt: 1, cwd: 42 }, 'cwd'],
      [{ cwd: '/w', seedLength: -1 }, 'seedLength'],
    ]
    for (const [patch, field] of cases) {
      await f.patchStoredHeader('hdr', patch)
      const error = await rejection(f.store.load('hdr'))
      expectCode(error, 'SESSION_CORRUPT')
      expect((error as Error).message).toContain(`header.${field}`)
      expectCode(await rejection(f.store.open('hdr')), 'SESSION_CORRUPT')
    }
  })

  it('lists the other sessions when one header is damaged, and tells which and why', async () => {
    const f = await fixture()
    if (!f.patchStoredHeader) return
    for (const id of ['good-1', 'broken', 'good-2']) {
      const handle = await f.store.create({ id })
      appendSampleTurn(handle.session)
      await handle.close()
    }
    await f.patchStoredHeader('broken', { createdAt: 'yesterday' })
    const notices: StoreNotice[] = []
    const listed = await f.store.list({ onNotice: (notice) => notices.push(notice) })
    expect(listed.map((s) => s.id).sort()).toEqual(['good-1', 'good-2'])
    expect(notices.map((n) => n.code)).toEqual(['SESSION_UNREADABLE'])
    expect(notices[0]!.message).toContain('broken')
    expect(notices[0]!.message).toContain('createdAt')
    // the damaged one does not take a place of the limit
    expect((await f.store.list({ limit: 2 })).map((s) => s.id).sort()).toEqual(['good-1', 'good-2'])
  })

  it('refuses an id that is not a session id at every entry, typed, before it reaches a path or a query', async () => {
    const f = await fixture()
    const bad = [
      'nul\u0000id',
      '../escape',
      '',
      '.hidden',
      'x'.repeat(129),
      'a/b',
      `big${'x'.repeat(1 << 20)}`,
    ]
    for (const id of bad) {
      const attempts: Array<[string, () => Promise<unknown>]> = [
        ['open', () => f.store.open(id)],
        ['load', () => f.store.load(id)],
        ['inspect', () => f.store.inspect(id)],
        ['append', () => f.store.append(id, [])],
        ['fork', () => f.store.fork(id)],
        ['readRaw', () => f.store.readRaw(id)],
      ]
      for (const [what, attempt] of attempts) {
        const error = await rejection(attempt())
        expect(isKeelError(error) ? error.code : error, `${what} ${JSON.stringify(id.slice(0, 20))}`).toBe(
          'SESSION_ID_INVALID',
        )
        expect((error as Error).message.length, what).toBeLessThan(500)
      }
      expectCode(await rejection(f.store.create({ id })), 'HEADER_INVALID')
    }
    // a bad child id of a fork is refused before anything is written
    const parent = await f.store.create({ id: 'parent-ok' })
    appendSampleTurn(parent.session)
    await parent.close()
    expectCode(await rejection(f.store.fork('parent-ok', { childId: 'bad\u0000child' })), 'HEADER_INVALID')
    expect((await f.store.list()).map((s) => s.id)).toEqual(['parent-ok'])
  })

  it('refuses event times that are not finite non-negative numbers, saying it is an append', async () => {
    const f = await fixture()
    const handle = await f.store.create({ id: 'times' })
    for (const time of [Number.NaN, Number.POSITIVE_INFINITY, -1]) {
      const error = thrown(() => handle.session.append('turn/start', { turn: 1 }, { time }))
      expectCode(error, 'EVENT_ENVELOPE_INVALID')
      expect((error as Error).message).toContain("cannot append 'turn/start'")
      expect((error as Error).message).not.toContain('stored event')
    }
    expect(handle.session.nextSeq).toBe(0)
    await handle.close()
    const imported = await rejection(
      f.store.append('times', [{ type: 'turn/start', seq: 0, time: -5, data: { turn: 1 } }]),
    )
    expectCode(imported, 'EVENT_ENVELOPE_INVALID')
    expect((await f.store.load('times')).nextSeq).toBe(0)
  })
}
