// Ctrl-C stops a compaction: the summary call ends, nothing is applied, the run closes with
// `compaction/end { error: COMPACTION_ABORTED }`, and the agent closes promptly. The summary
// requests stall until the client goes away: without the signal these tests hang.
import type { RecordedRequest, ScriptedResponse } from '@keel/scripted-server'
import type { Session } from '@keel/session'
import { describe, expect, it } from 'vitest'
import { filler, readFile } from './helpers.js'
import { isSummary, realAgent } from './real-agent.js'

const stall: ScriptedResponse = { fault: { type: 'stall', afterChunks: 0 } }

/** The compaction events of the latest run, from its start. */
function latestRun(session: Session) {
  const start = session.events.findLast((e) => e.type === 'compaction/start')!
  return session.events.slice(start.seq)
}

function expectAbortedRun(session: Session, surfaceBefore: readonly number[]) {
  const run = latestRun(session)
  expect(run.map((e) => e.type).filter((t) => t.startsWith('compaction/'))).toEqual([
    'compaction/start',
    'compaction/end',
  ])
  const end = run.find((e) => e.type === 'compaction/end')!
  expect(end.data).toMatchObject({
    pruned: 0,
    summarized: false,
    summaryCalls: 1,
    error: { code: 'COMPACTION_ABORTED' },
  })
  expect(session.surfaceSeqs()).toEqual(surfaceBefore)
}

describe('cancelling a compaction', () => {
  it('Ctrl-C during an automatic summary before a step stops the call, applies nothing and ends the turn', async () => {
    let abort = () => {}
    const steps: ScriptedResponse[] = [
      { text: filler(10_000, 'first answer') },
      { toolCalls: [{ name: 'read_file', arguments: { path: 'a.ts' } }] },
    ]
    let next = 0
    const { server, agent, session, displayed } = await realAgent({
      id: 'abort-auto',
      server: {
        handler: (request: RecordedRequest) => {
          if (!isSummary(request)) return steps[next++]!
          setTimeout(() => abort(), 20)
          return stall
        },
      },
      compaction: { contextWindow: 4_000, pruneMinTokens: 100_000 },
      tools: [readFile as never],
      agent: { maxTokens: 500 },
    })
    abort = () => agent.abort()
    await agent.send('Explain the codebase.')
    let surfaceBefore: number[] = []
    const unsubscribe = session.subscribe((event) => {
      if (event.type === 'compaction/start') surfaceBefore = session.surfaceSeqs().slice()
    })
    const result = await agent.send('Now read a.ts.')
    unsubscribe()
    expect(result.reason).toBe('aborted')
    expectAbortedRun(session, surfaceBefore)
    expect(latestRun(session).find((e) => e.type === 'compaction/start')!.data).toMatchObject({
      trigger: 'auto',
    })
    await server.settled()
    expect(server.requests.find(isSummary)!.outcome).toBe('client-closed')
    expect(displayed.map((n) => n.text)).toContain('Compaction cancelled: nothing was changed.')
    // no step after the compaction: the turn ended before its second model call
    expect(server.requests.filter((r) => !isSummary(r))).toHaveLength(2)
    await agent.close()
  })

  it('a cancelled /compact stops its summary call and applies nothing', async () => {
    const controller = new AbortController()
    const { server, agent, session } = await realAgent({
      id: 'abort-manual',
      server: {
        handler: (request: RecordedRequest) => {
          if (!isSummary(request)) return { text: filler(4_000, `answer ${request.index}`) }
          setTimeout(() => controller.abort(), 20)
          return stall
        },
      },
    })
    for (const task of ['One.', 'Two.', 'Three.']) await agent.send(task)
    const surfaceBefore = session.surfaceSeqs().slice()
    await expect(agent.runCommand('compact', '', { signal: controller.signal })).rejects.toMatchObject({
      code: 'COMMAND_ABORTED',
    })
    const service = agent.services.get('compaction.run')!
    while (service.busy) await new Promise((resolve) => setTimeout(resolve, 5))
    expectAbortedRun(session, surfaceBefore)
    await server.settled()
    expect(server.requests.find(isSummary)!.outcome).toBe('client-closed')
  })

  it('Ctrl-C during the overflow compaction stops it and ends the turn without retrying the step', async () => {
    let abort = () => {}
    const { server, agent, session } = await realAgent({
      id: 'abort-overflow',
      server: {
        // the request of the fourth turn is longer than the window: HTTP 400, then the overflow compaction
        contextWindow: 3_100,
        handler: (request: RecordedRequest) => {
          if (!isSummary(request)) return { text: filler(4_000, `answer ${request.index}`) }
          setTimeout(() => abort(), 20)
          return stall
        },
      },
      // the automatic trigger never fires: only the overflow does
      compaction: { contextWindow: 1_000_000, summaryMaxTokens: 300 },
      agent: { maxTokens: 200 },
    })
    abort = () => agent.abort()
    for (const task of ['One.', 'Two.', 'Three.']) expect((await agent.send(task)).reason).toBe('completed')
    let surfaceBefore: number[] = []
    const unsubscribe = session.subscribe((event) => {
      if (event.type === 'compaction/start') surfaceBefore = session.surfaceSeqs().slice()
    })
    const result = await agent.send('Four.')
    unsubscribe()
    expect(result.reason).toBe('aborted')
    expect(latestRun(session).find((e) => e.type === 'compaction/start')!.data).toMatchObject({
      trigger: 'overflow',
    })
    expectAbortedRun(session, surfaceBefore)
    await server.settled()
    expect(server.requests.find(isSummary)!.outcome).toBe('client-closed')
    // the refused step was not sent again
    const refused = server.requests.filter((r) => !isSummary(r)).slice(3)
    expect(refused.map((r) => r.outcome)).toEqual(['http-error'])
  })
})
