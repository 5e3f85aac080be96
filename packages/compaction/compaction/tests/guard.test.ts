import { describe, expect, it } from 'vitest'
import { Compactor, compactionLogProjection } from '../src/index.js'
import { filler, isSummaryRequest, newSession, serve, writeTurn } from './helpers.js'

const config = { contextWindow: 4_000, threshold: 0.8, target: 0.5, keepRecent: 0.15 }

/** Answers every summary request with a short summary. */
const summaries = () => serve({ handler: (request) => ({ text: `Summary #${request.index}.` }) })

describe('loop guard', () => {
  it('a compaction that does not get below the threshold stops automatic compaction for the turn and tells the user', async () => {
    const { server, llm } = await summaries()
    const session = newSession('guard-stall')
    writeTurn(session, 'Start.', [{ text: filler(2_000, 'a') }, { text: filler(2_000, 'b') }])
    writeTurn(session, 'More.', [{ text: filler(2_400, 'c') }])
    // The provider counts far more than the estimator sees (tool schemas, …): a gap compaction cannot remove.
    writeTurn(
      session,
      'Continue.',
      [{ text: 'step', usage: { inputTokens: 3_900, outputTokens: 100, totalTokens: 4_000 } }],
      {
        open: true,
      },
    )
    const notices: string[] = []
    const compactor = new Compactor({
      session,
      llm,
      config: { ...config, threshold: 0.7 },
      onNotice: (n) => notices.push(`${n.kind}: ${n.text}`),
    })
    expect(compactor.measure()).toEqual({ tokens: 4_000, source: 'provider' })

    const first = await compactor.compactIfNeeded()
    expect(first).toMatchObject({ status: 'compacted', summarized: true, belowThreshold: false })
    expect(first.tokensAfter).toBeGreaterThanOrEqual(compactor.thresholdTokens)
    // the meter keeps the provider's gap instead of dropping to the bare estimate
    expect(compactor.measure()).toEqual({ tokens: first.tokensAfter, source: 'estimate' })
    expect(session.project(compactionLogProjection)).toMatchObject({
      turn: 3,
      automaticInTurn: 1,
      stoppedInTurn: true,
    })
    expect(notices.filter((n) => n.startsWith('guard:'))).toEqual([
      expect.stringContaining('automatic summaries are off for the rest of this turn'),
    ])

    // still over the threshold, but no second attempt in this turn, and no second notice
    const second = await compactor.compactIfNeeded()
    expect(second).toMatchObject({
      status: 'skipped',
      reason: expect.stringContaining('did not bring the context below'),
    })
    expect(await compactor.compact({ trigger: 'overflow' })).toMatchObject({ status: 'skipped' })
    expect(server.requests.filter(isSummaryRequest)).toHaveLength(1)
    expect(notices.filter((n) => n.startsWith('guard:'))).toHaveLength(1)
    // a manual compaction is still the user's call
    expect(await compactor.compact({ trigger: 'manual' })).toMatchObject({
      status: expect.stringMatching(/compacted|failed/),
    })

    // the next turn starts afresh
    session.append('turn/end', { turn: 3, reason: 'completed' })
    writeTurn(
      session,
      'Next.',
      [{ text: 'x', usage: { inputTokens: 3_500, outputTokens: 10, totalTokens: 3_510 } }],
      {
        open: true,
      },
    )
    expect(compactor.automaticBlocked()).toBeNull()
  })

  it('never runs more than maxPerTurn automatic compactions in one turn', async () => {
    const { server, llm } = await summaries()
    const session = newSession('guard-count')
    const compactor = new Compactor({ session, llm, config: { ...config, maxPerTurn: 2 } })
    writeTurn(session, 'Long task.', [{ text: filler(6_000, 'one') }, { text: filler(10_000, 'two') }], {
      open: true,
    })
    const results = []
    for (let step = 3; step <= 5; step++) {
      results.push(await compactor.compactIfNeeded())
      session.append('step/start', { turn: 1, step })
      session.append('assistant/message', {
        turn: 1,
        step,
        message: { role: 'assistant', content: [{ type: 'text', text: filler(10_000, `step ${step}`) }] },
        stream: { provider: 'test', model: 'm', startedAt: 1, endedAt: 2, chunks: 1 },
      })
      session.append('step/end', { turn: 1, step })
    }
    results.push(await compactor.compactIfNeeded())
    expect(results.map((r) => r.status)).toEqual(['compacted', 'compacted', 'skipped', 'skipped'])
    expect(results.slice(0, 2).every((r) => r.belowThreshold)).toBe(true)
    expect(results[2]!.reason).toBe('turn 1 already had 2 automatic summaries, the most allowed')
    expect(server.requests).toHaveLength(2)
  })
})
