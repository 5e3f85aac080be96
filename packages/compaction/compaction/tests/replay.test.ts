import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { JsonlStore } from '@keel/store-jsonl'
import { todoProjection } from '@keel/todo'
import { describe, expect, it } from 'vitest'
import { Compactor, compactionLogProjection, measureSurface } from '../src/index.js'
import { filler, onCleanup, serve, summariesOnSurface, toolPairsIntact, writeTurn } from './helpers.js'

const config = { contextWindow: 4_000, threshold: 0.8, target: 0.5, keepRecent: 0.15 }

function tempStore(): JsonlStore {
  const home = mkdtempSync(join(tmpdir(), 'keel-compaction-'))
  const store = new JsonlStore({ home })
  onCleanup(async () => {
    await store.close()
    rmSync(home, { recursive: true, force: true })
  })
  return store
}

/** Writes a session that went through a prune, an automatic summary, a failed and a manual compaction. */
async function compactedSession(store: JsonlStore, id: string) {
  let failNext = false
  const { llm } = await serve({
    handler: (request) =>
      failNext ? { fault: { type: 'server-error' } } : { text: `Summary ${request.index}: keep going.` },
  })
  const handle = await store.create({ id })
  const session = handle.session
  session.append('system/message', {
    message: { role: 'system', content: [{ type: 'text', text: 'Be careful.' }] },
  })
  const compactor = new Compactor({ session, llm, config })
  writeTurn(session, 'Read everything.', [
    { calls: [{ name: 'read_file', args: { path: 'a.ts' }, output: filler(9_000, 'a') }] },
    { text: filler(1_000, 'noted') },
  ])
  session.append('todo/write', { todos: [{ id: 't1', content: 'Ship it', status: 'in_progress' }] })
  writeTurn(session, 'More.', [{ text: filler(3_000, 'more') }], { open: true })
  expect(await compactor.compactIfNeeded()).toMatchObject({ status: 'compacted' })
  session.append('turn/end', { turn: 2, reason: 'completed' })
  writeTurn(session, 'Again.', [{ text: filler(6_000, 'again') }])
  failNext = true
  expect(await compactor.compact({ trigger: 'manual' })).toMatchObject({ status: 'failed' })
  failNext = false
  writeTurn(session, 'Later.', [{ text: filler(4_000, 'later') }])
  expect(await compactor.compact({ trigger: 'manual', instructions: 'Keep paths.' })).toMatchObject({
    status: 'compacted',
    summarized: true,
  })
  writeTurn(session, 'After.', [{ text: 'fine' }])
  await handle.flush()
  return handle
}

describe('replay and fork', () => {
  it('reloading a compacted session from its JSONL log yields the same derived messages and state', async () => {
    const store = tempStore()
    const handle = await compactedSession(store, 'replayed')
    const live = handle.session
    expect(live.events.filter((e) => e.type === 'compaction/prune').length).toBeGreaterThan(0)
    expect(live.events.filter((e) => e.type === 'compaction/summary')).toHaveLength(1)
    expect(live.events.filter((e) => e.type === 'compaction/end' && e.data.error)).toHaveLength(1)
    await handle.close()

    const loaded = await store.load('replayed')
    expect(loaded.events).toEqual(live.events)
    expect(loaded.deriveMessages()).toEqual(live.deriveMessages())
    expect(loaded.surfaceSeqs()).toEqual(live.surfaceSeqs())
    expect(loaded.project(todoProjection)).toEqual([{ id: 't1', content: 'Ship it', status: 'in_progress' }])
    expect(loaded.project(compactionLogProjection)).toEqual(live.project(compactionLogProjection))
    expect(measureSurface(loaded)).toEqual(measureSurface(live))
    expect(summariesOnSurface(loaded)).toHaveLength(1)
    expect(toolPairsIntact(loaded)).toBe(true)
    // compaction events are informational (ignorable): the core replaces decide the surface
    const stored = (await store.readRaw('replayed'))!
      .split('\n')
      .slice(1, -1)
      .map((l) => JSON.parse(l))
    const compactionLines = stored.filter((e) => String(e.type).startsWith('compaction/'))
    expect(compactionLines.length).toBeGreaterThan(4)
    expect(compactionLines.every((e) => e.ignorable === true)).toBe(true)
  })

  it('a fork after compaction inherits the compacted surface and compacts on its own; a fork before it sees the surface it had', async () => {
    const store = tempStore()
    const parent = await compactedSession(store, 'parent')
    const parentMessages = parent.session.deriveMessages().slice()
    const lastStart = parent.session.events.findLast((e) => e.type === 'compaction/start')!
    await parent.close()

    const child = await store.fork('parent', { childId: 'child' })
    expect(child.session.deriveMessages()).toEqual(parentMessages)
    expect(child.session.project(todoProjection)).toEqual([
      { id: 't1', content: 'Ship it', status: 'in_progress' },
    ])
    const { llm } = await serve({ handler: () => ({ text: 'Child summary.' }) })
    writeTurn(child.session, 'Child work.', [
      { text: filler(5_000, 'child') },
      { text: filler(3_000, 'tail') },
    ])
    const result = await new Compactor({ session: child.session, llm, config }).compact({ trigger: 'manual' })
    expect(result).toMatchObject({ status: 'compacted', summarized: true })
    expect(summariesOnSurface(child.session)).toEqual([expect.stringContaining('Child summary.')])
    await child.close()
    const reloadedChild = await store.load('child')
    expect(reloadedChild.deriveMessages()).toEqual(child.session.deriveMessages())
    expect((await store.load('parent')).deriveMessages()).toEqual(parentMessages)

    // cut just before the last compaction began: the child sees the surface it compacted
    const early = await store.fork('parent', { childId: 'early', atSeq: lastStart.seq - 1 })
    const before = (await store.load('parent')).events.slice(0, lastStart.seq)
    expect(early.session.events.slice(0, lastStart.seq)).toEqual(before)
    expect(summariesOnSurface(early.session)).toHaveLength(0)
    expect(JSON.stringify(early.session.deriveMessages())).toContain(
      '[Output pruned by compaction: read_file',
    )
    expect(early.session.deriveMessages()).not.toEqual(parentMessages)
    await early.close()
  })
})
