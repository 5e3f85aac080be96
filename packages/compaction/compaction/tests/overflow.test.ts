// The overflow path: a real context-length refusal from the provider (HTTP 400 with
// DeepSeek's message, through the real DeepSeek adapter) is recovered by an `overflow`
// compaction and one retry of the step — first the engine part, then inside a real agent
// through its `modelError` interception point.
import { createAgent, usePlugin } from '@keel/agent'
import { type LlmAdapter, LlmError } from '@keel/llm'
import type { RecordedRequest, ScriptHandler } from '@keel/scripted-server'
import { Session } from '@keel/session'
import { describe, expect, it } from 'vitest'
import { Compactor, compactionPlugin, recoverFromOverflow } from '../src/index.js'
import { filler, isSummaryRequest, messagesOf, newSession, onCleanup, serve, writeTurn } from './helpers.js'

const config = { contextWindow: 4_000, threshold: 0.8, target: 0.5, keepRecent: 0.15 }

/** Runs one model call the way the agent does and returns the error it failed with. */
async function failingCall(llm: LlmAdapter, messages: Parameters<LlmAdapter['stream']>[0]['messages']) {
  try {
    for await (const _chunk of llm.stream({ messages })) {
      // drain
    }
  } catch (error) {
    if (error instanceof LlmError) return error
    throw error
  }
  throw new Error('the call did not fail')
}

describe('context overflow (engine part)', () => {
  it('compacts with trigger overflow inside the open step and asks for one retry of that step', async () => {
    const { server, llm } = await serve({
      script: [{ fault: { type: 'context-length' } }, { text: 'Summary of the long history.' }],
    })
    const session = newSession('overflow')
    writeTurn(session, 'Read.', [
      { calls: [{ name: 'read_file', args: { path: 'a' }, output: filler(3_000, 'a') }] },
      { text: filler(2_000, 'b') },
    ])
    const turn = writeTurn(session, 'Go on.', [{ text: filler(2_600, 'c') }], { open: true })
    // the agent's step 2 is open: its model call was refused as too long
    session.append('step/start', { turn, step: 2 })
    const error = await failingCall(llm, session.deriveMessages())
    expect(error).toMatchObject({ kind: 'context-overflow', code: 'LLM_CONTEXT_OVERFLOW' })
    session.append('assistant/attempt', {
      turn,
      step: 2,
      attempt: 1,
      stream: error.record!,
      error: { code: error.code, message: error.message },
    })
    const compactor = new Compactor({ session, llm, config })
    // the estimate is under the threshold, but the provider said otherwise: compact anyway
    expect(compactor.measure().tokens).toBeLessThan(compactor.thresholdTokens)
    const retried = new Set<string>()

    expect(await recoverFromOverflow(compactor, { turn, step: 2, error }, retried)).toEqual({
      action: 'retry',
    })

    const start = session.events.find((e) => e.type === 'compaction/start')!
    expect(start.data).toMatchObject({ trigger: 'overflow', turn })
    expect(session.events.some((e) => e.type === 'compaction/summary')).toBe(true)
    expect(session.events.at(-1)).toMatchObject({ type: 'compaction/end', data: { summarized: true } })
    expect(session.openTurn).toEqual({ turn, step: 2 })
    expect(server.requests.filter(isSummaryRequest)).toHaveLength(1)
    // the step may now append its message: the compacted surface is what the retry sends
    session.append('assistant/message', {
      turn,
      step: 2,
      message: { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
      stream: { provider: 'deepseek', model: 'scripted-model', startedAt: 1, endedAt: 2, chunks: 1 },
    })

    // a second overflow in the same step fails it (one retry per step); other errors are not ours
    expect(await recoverFromOverflow(compactor, { turn, step: 2, error }, retried)).toEqual({
      action: 'fail',
    })
    const other = new LlmError('server', 'boom')
    expect(await recoverFromOverflow(compactor, { turn, step: 3, error: other }, retried)).toEqual({
      action: 'fail',
    })
    expect(server.requests).toHaveLength(2)
  })

  it('fails the step when the overflow compaction cannot change anything', async () => {
    const { server, llm } = await serve()
    const session = newSession('overflow-empty')
    const turn = writeTurn(session, 'Hi.', [], { open: true })
    const notices: string[] = []
    const compactor = new Compactor({
      session,
      llm,
      config,
      onNotice: (n) => notices.push(`${n.kind}: ${n.text}`),
    })
    const error = new LlmError('context-overflow', 'too long')
    expect(await recoverFromOverflow(compactor, { turn, step: 1, error }, new Set())).toEqual({
      action: 'fail',
    })
    expect(session.events.at(-1)).toMatchObject({
      type: 'compaction/end',
      data: { pruned: 0, summarized: false },
    })
    // the user is not told that something was compacted
    expect(notices).toEqual([
      expect.stringMatching(/^compacted: Nothing to compact \(overflow\): no old tool output/),
    ])
    expect(server.requests).toHaveLength(0)
  })
})

const overflowFault = { fault: { type: 'context-length' as const } }

/** Whether a request still carries the first, long answers (it was not compacted). */
const uncompacted = (request: RecordedRequest): boolean =>
  JSON.stringify(messagesOf(request)).includes('long answer 1')

/**
 * An agent with the compaction plugin (window far above the history, so only the provider
 * can say it is too long) whose first two turns left long answers; `third` answers the
 * agent's requests of turn 3.
 */
async function agentAfterTwoTurns(
  id: string,
  third: (request: RecordedRequest) => ReturnType<ScriptHandler>,
) {
  let turn = 0
  const { server, llm } = await serve({
    handler: (request) => {
      if (isSummaryRequest(request)) return { text: '## Goal\nAnswer questions (summary).' }
      return turn < 3 ? { text: filler(4_000, `long answer ${turn}`) } : third(request)
    },
  })
  const session = Session.create(id)
  const displayed: string[] = []
  const agent = await createAgent({
    llm,
    session,
    cwd: process.cwd(),
    systemPrompt: 'You are careful.',
    plugins: [usePlugin(compactionPlugin(), { contextWindow: 100_000 })],
    observers: [{ onDisplay: (n) => displayed.push(`${n.kind}: ${n.text}`) }],
  })
  onCleanup(() => agent.close())
  turn = 1
  await agent.send('First question.')
  turn = 2
  await agent.send('Second question.')
  turn = 3
  const before = server.requests.length
  return { server, session, agent, displayed, turnRequests: () => server.requests.slice(before) }
}

describe('context overflow inside a real agent (modelError)', () => {
  it('a context-length refusal compacts and the step is retried once on the compacted context', async () => {
    let refused = 0
    const { session, agent, displayed, turnRequests } = await agentAfterTwoTurns('agent-overflow', () =>
      refused++ === 0 ? overflowFault : { text: 'Third answer.' },
    )

    const result = await agent.send('Third question.')

    expect(result).toMatchObject({ turn: 3, reason: 'completed', text: 'Third answer.' })
    // refused request, the summary request, the retried request: nothing more
    const requests = turnRequests()
    expect(requests.map((r) => (isSummaryRequest(r) ? 'summary' : 'step'))).toEqual([
      'step',
      'summary',
      'step',
    ])
    expect(uncompacted(requests[0]!)).toBe(true)
    expect(uncompacted(requests[2]!)).toBe(false)
    expect(JSON.stringify(messagesOf(requests[2]!))).toContain('[Context compacted:')
    expect(JSON.stringify(messagesOf(requests[2]!))).toContain('Third question.')
    // in the log: the refused attempt, then the compaction inside the open step, then the message
    const types = session.events.filter((e) => e.seq > 0).map((e) => e.type as string)
    const attempt = types.lastIndexOf('assistant/attempt')
    expect(session.events.find((e) => e.type === 'assistant/attempt')).toMatchObject({
      data: { turn: 3, step: 1, attempt: 1, error: { code: 'LLM_CONTEXT_OVERFLOW' } },
    })
    expect(types.slice(attempt + 1, attempt + 2)).toEqual(['compaction/start'])
    const start = session.events.find((e) => e.type === 'compaction/start')!
    expect(start.data).toMatchObject({ turn: 3, trigger: 'overflow' })
    expect(session.events.find((e) => e.type === 'compaction/end')).toMatchObject({
      data: { turn: 3, summarized: true },
    })
    expect(session.events.filter((e) => e.type === 'assistant/message').at(-1)).toMatchObject({
      data: { turn: 3, step: 1 },
    })
    expect(displayed.some((d) => d.startsWith('compaction: Context compacted (overflow)'))).toBe(true)
  })

  it('a second refusal of the same step ends the turn with the error (no loop), and the session goes on', async () => {
    let turn3 = true
    const { session, agent, turnRequests } = await agentAfterTwoTurns('agent-overflow-twice', () =>
      turn3 ? overflowFault : { text: 'Fine now.' },
    )

    const result = await agent.send('Third question.')

    expect(result).toMatchObject({ turn: 3, reason: 'error', error: { code: 'LLM_CONTEXT_OVERFLOW' } })
    expect(turnRequests().map((r) => (isSummaryRequest(r) ? 'summary' : 'step'))).toEqual([
      'step',
      'summary',
      'step',
    ])
    expect(session.events.filter((e) => e.type === 'compaction/start')).toHaveLength(1)
    expect(session.events.filter((e) => e.type === 'assistant/attempt')).toHaveLength(2)
    expect(session.openTurn).toBeNull()
    // not wedged: the next turn runs on the compacted surface
    turn3 = false
    expect(await agent.send('Fourth question.')).toMatchObject({ reason: 'completed', text: 'Fine now.' })
  })
})
