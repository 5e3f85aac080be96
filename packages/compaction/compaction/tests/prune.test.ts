import { describe, expect, it } from 'vitest'
import { Compactor, estimateMessageTokens, measureSurface } from '../src/index.js'
import { filler, newSession, serve, toolPairsIntact, writeTurn } from './helpers.js'

const config = { contextWindow: 4_000, threshold: 0.8, target: 0.5, keepRecent: 0.15 }

describe('tier 1: prune', () => {
  it('prunes the oldest outputs outside the protected tail until the target, with no model call', async () => {
    const { server, llm } = await serve()
    const session = newSession('prune-only')
    writeTurn(session, 'Read the big file.', [
      { calls: [{ name: 'read_file', args: { path: 'big.txt' }, output: filler(10_000, 'big') }] },
      { text: 'Read it.' },
    ])
    writeTurn(session, 'Read the medium file.', [
      { calls: [{ name: 'read_file', args: { path: 'medium.txt' }, output: filler(4_000, 'medium') }] },
      { text: 'Read that too.' },
    ])
    writeTurn(session, 'Now think.', [], { open: true })
    const bigResult = session.events.find(
      (e) => e.type === 'tool/result' && e.data.message.toolName === 'read_file',
    )!
    const medium = session.events.filter((e) => e.type === 'tool/result')[1]!
    const notices: string[] = []
    const compactor = new Compactor({ session, llm, config, onNotice: (n) => notices.push(n.text) })
    expect(measureSurface(session)).toMatchObject({ source: 'estimate' })
    expect(compactor.measure().tokens).toBeGreaterThan(compactor.thresholdTokens)

    const result = await compactor.compactIfNeeded()

    expect(result).toMatchObject({ status: 'compacted', pruned: 1, summarized: false, belowThreshold: true })
    expect(server.requests).toHaveLength(0)
    const types = session.events.slice(result.start).map((e) => e.type)
    expect(types).toEqual(['compaction/start', 'compaction/prune', 'tool/result', 'compaction/end'])
    const [start, prune, rewrite, end] = session.events.slice(result.start!)
    expect(start).toMatchObject({
      data: { trigger: 'auto', turn: 3, tokenSource: 'estimate', contextWindow: 4_000 },
    })
    const bigTokens = estimateMessageTokens(
      bigResult.type === 'tool/result' ? bigResult.data.message : (null as never),
    )
    expect(prune!.data).toEqual({
      start: result.start,
      range: { startSeq: bigResult.seq, endSeq: bigResult.seq },
      shadowedSeqs: [bigResult.seq],
      tokens: bigTokens,
    })
    expect(rewrite).toMatchObject({
      type: 'tool/result',
      surfaceOp: { op: 'replace', startSeq: bigResult.seq, endSeq: bigResult.seq },
      sourceEventSeqs: [bigResult.seq],
    })
    const placeholder = rewrite!.type === 'tool/result' ? rewrite!.data.message : (null as never)
    expect(placeholder.toolCallId).toBe(
      bigResult.type === 'tool/result' ? bigResult.data.message.toolCallId : '',
    )
    expect((placeholder.content[0] as { text: string }).text).toBe(
      `[Output pruned by compaction: read_file returned 10,000 characters, about ${bigTokens.toLocaleString('en-US')} tokens. The full output is kept in the session log (seq ${bigResult.seq}). Run the tool again if you need its content.]`,
    )
    expect(end!.data).toMatchObject({ start: result.start, turn: 3, pruned: 1, summarized: false })
    // the medium output is inside the protected tail and untouched; every call still has its result
    expect(session.isOnSurface(medium.seq)).toBe(true)
    expect(session.isOnSurface(bigResult.seq)).toBe(false)
    expect(toolPairsIntact(session)).toBe(true)
    expect(compactor.measure().tokens).toBe(result.tokensAfter)
    expect(notices).toEqual([expect.stringContaining('Context compacted (auto)')])
  })

  it('does nothing below the threshold, and never prunes small outputs or placeholders twice', async () => {
    const { server, llm } = await serve()
    const session = newSession('prune-small')
    writeTurn(session, 'Small reads.', [
      { calls: [{ name: 'read_file', args: { path: 'a' }, output: filler(400) }] },
      { text: 'ok' },
    ])
    const compactor = new Compactor({ session, llm, config })
    expect(await compactor.compactIfNeeded()).toMatchObject({
      status: 'skipped',
      reason: 'below the threshold',
    })
    const before = session.events.length
    writeTurn(session, 'Big read.', [
      { calls: [{ name: 'read_file', args: { path: 'b' }, output: filler(14_000) }] },
      { text: filler(2_600, 'tail') },
    ])
    const first = await compactor.compact({ trigger: 'auto' })
    expect(first).toMatchObject({ status: 'compacted', pruned: 1 })
    const prunes = session.events.filter((e) => e.type === 'compaction/prune')
    expect(prunes).toHaveLength(1)
    expect(prunes[0]!.seq).toBeGreaterThan(before)
    // a second pass finds nothing left to prune (the 400-char output is under pruneMinTokens)
    const second = await compactor.compact({ trigger: 'auto' })
    expect(second.pruned).toBe(0)
    expect(server.requests).toHaveLength(0)
  })
})
