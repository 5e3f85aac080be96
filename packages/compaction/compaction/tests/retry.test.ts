// A failed summary call is retried as the agent retries its own; a summarizer that keeps
// failing is switched off across turns (pruning goes on) until a manual /compact succeeds.
import type { RecordedRequest, ScriptedResponse } from '@keel/scripted-server'
import { describe, expect, it } from 'vitest'
import { filler, readFile } from './helpers.js'
import { agentRequests, isSummary, realAgent } from './real-agent.js'

describe('summary call retries', () => {
  it('retries a rate-limited and a failing summary call with backoff, logging compaction/retry, then applies it', async () => {
    const summaries: ScriptedResponse[] = [
      { fault: { type: 'rate-limit', retryAfter: 0 } },
      { fault: { type: 'server-error' } },
      { text: '## Goal\nAnswer the questions.' },
    ]
    const { server, agent, session } = await realAgent({
      id: 'retry-summary',
      server: {
        handler: (request) =>
          isSummary(request) ? summaries.shift()! : { text: filler(4_000, `answer ${request.index}`) },
      },
    })
    for (const task of ['One.', 'Two.', 'Three.']) await agent.send(task)
    const reply = await agent.runCommand('compact')
    expect(reply).toMatch(/older history summarized/)
    expect(server.requests.filter(isSummary).map((r) => r.outcome)).toEqual([
      'http-error',
      'http-error',
      'completed',
    ])
    const retries = session.events.filter((e) => e.type === 'compaction/retry').map((e) => e.data)
    expect(retries).toEqual([
      expect.objectContaining({
        attempt: 1,
        status: 429,
        error: expect.objectContaining({ code: 'LLM_RATE_LIMIT' }),
      }),
      expect.objectContaining({
        attempt: 2,
        status: 500,
        error: expect.objectContaining({ code: 'LLM_SERVER' }),
      }),
    ])
    const start = session.events.findLast((e) => e.type === 'compaction/start')!
    expect(retries.every((r) => r.start === start.seq && r.delayMs >= 0)).toBe(true)
    expect(session.events.findLast((e) => e.type === 'compaction/end')!.data).toMatchObject({
      summarized: true,
      summaryCalls: 3,
    })
  })
})

describe('the no-progress guard across turns', () => {
  it('three failed automatic summaries in a row switch them off (pruning goes on) until a manual /compact succeeds', async () => {
    let summarizer: 'bloated' | 'good' = 'bloated'
    const handler = (request: RecordedRequest): ScriptedResponse => {
      if (isSummary(request)) {
        // a summary no smaller than what it replaces: COMPACTION_SUMMARY_NOT_SMALLER
        return summarizer === 'bloated'
          ? { text: filler(60_000, 'bloated summary') }
          : { text: '## Goal\nKeep going.' }
      }
      const last = request.body?.messages?.at(-1)
      if (last?.role === 'tool') return { text: filler(6_000, `thoughts ${request.index}`) }
      return { toolCalls: [{ name: 'read_file', arguments: { path: `f${request.index}.ts` } }] }
    }
    const { server, agent, session, displayed } = await realAgent({
      id: 'guard-across-turns',
      server: { handler },
      tools: [readFile as never],
      agent: { contextWindows: { 'scripted-model': 8_000 }, maxTokens: 500 },
    })
    const summaryRequestsIn = (from: number) => server.requests.slice(from).filter(isSummary).length
    const failures = () =>
      session.events.filter(
        (e) => e.type === 'compaction/end' && e.data.error?.code === 'COMPACTION_SUMMARY_NOT_SMALLER',
      ).length
    let turn = 0
    while (failures() < 3 && turn < 20) {
      const from = server.requests.length
      expect(await agent.send(`Task ${++turn}.`)).toMatchObject({ reason: 'completed' })
      // at most one summary attempt per turn: a failure stops them for the rest of the turn
      expect(summaryRequestsIn(from)).toBeLessThanOrEqual(1)
    }
    expect(failures()).toBe(3)
    const guards = displayed.filter((n) => n.kind === 'compaction-guard').map((n) => n.text)
    expect(guards).toContainEqual(expect.stringMatching(/^Automatic summaries are off: 3 in a row failed/))
    // then no summary call at all in the next turns, while pruning still runs
    const offAt = session.events.length
    const from = server.requests.length
    for (let more = 0; more < 3; more++) {
      expect(await agent.send(`Task ${++turn}.`)).toMatchObject({ reason: 'completed' })
    }
    expect(summaryRequestsIn(from)).toBe(0)
    const prunes = session.events
      .slice(offAt)
      .filter((e) => e.type === 'compaction/end')
      .map((e) => e.data)
    expect(prunes.length).toBeGreaterThan(0)
    expect(prunes.every((end) => end.summaryCalls === 0 && end.pruned > 0)).toBe(true)

    // a manual compaction that succeeds turns them back on
    summarizer = 'good'
    expect(await agent.runCommand('compact')).toMatch(/^Compacted: .*older history summarized/)
    expect(displayed.map((n) => n.text)).toContain('Automatic summaries are back on.')
    const back = server.requests.length
    for (let more = 0; more < 3; more++) await agent.send(`Task ${++turn}.`)
    expect(summaryRequestsIn(back)).toBeGreaterThan(0)
    expect(agentRequests(server).length).toBeGreaterThan(0)
  })
})
