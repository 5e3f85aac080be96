import { Session } from '@keel/session'
import { defineTool } from '@keel/tools'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { type AgentNotice, definePlugin } from '../src/index.js'
import { rigsClosedAfterEach } from './helpers.js'

const open = rigsClosedAfterEach()

function bareHistory(): Session {
  const s = Session.create(`history-${Math.random().toString(36).slice(2)}`)
  s.append('turn/start', { turn: 1 })
  s.append('user/message', { message: { role: 'user', content: [{ type: 'text', text: 'earlier' }] } })
  s.append('turn/end', { turn: 1, reason: 'completed' })
  return s
}

describe('resume keeps history well-formed', () => {
  it('does not append the systemPrompt option to a resumed session; it says so', async () => {
    const list: AgentNotice[] = []
    const session = bareHistory()
    const r = await open([{ text: 'ok' }], {
      session,
      systemPrompt: 'Be brief.',
      observers: [{ onNotice: (n) => list.push(n) }],
    })
    expect(r.events('system/message')).toHaveLength(0)
    expect(list.map((n) => n.code)).toEqual(['SYSTEM_PROMPT_KEPT'])
    await r.agent.send('again')
    expect(r.server.requests[0]!.body!.messages!.map((m) => m.role)).toEqual(['user', 'user'])
    // the explicit act is refused for a history that does not open with a system message
    expect(() => r.agent.setSystemPrompt('Be brief.')).toThrow(
      expect.objectContaining({ code: 'SYSTEM_PROMPT_UNCHANGEABLE' }),
    )
  })

  it('changes the system prompt as a logged replace that stays first', async () => {
    const r = await open([{ text: 'one' }, { text: 'two' }], { systemPrompt: 'Old prompt.' })
    await r.agent.send('first')
    r.agent.setSystemPrompt('New prompt.')
    await r.agent.send('second')
    const messages = r.server.requests[1]!.body!.messages!
    expect(messages[0]).toMatchObject({ role: 'system', content: 'New prompt.' })
    expect(messages.filter((m) => m.role === 'system')).toHaveLength(1)
    expect(r.events('system/message').map((e) => e.surfaceOp)).toEqual([
      undefined,
      expect.objectContaining({ op: 'replace' }),
    ])
  })

  it('a log from before calls were always answered (turn closed with an open call) still gets answers sent', async () => {
    const legacy = Session.create('legacy', {}, [
      { type: 'turn/start', seq: 0, time: 1, data: { turn: 1 } },
      {
        type: 'user/message',
        seq: 1,
        time: 1,
        data: { message: { role: 'user', content: [{ type: 'text', text: 'go' }] } },
      },
      { type: 'step/start', seq: 2, time: 1, data: { turn: 1, step: 1 } },
      {
        type: 'assistant/message',
        seq: 3,
        time: 1,
        data: {
          turn: 1,
          step: 1,
          message: {
            role: 'assistant',
            content: [{ type: 'tool-call', id: 'old', name: 'bash', arguments: '{}' }],
          },
          stream: { provider: 'p', model: 'm', startedAt: 1, endedAt: 2, chunks: 1 },
        },
      },
      {
        type: 'tool/call',
        seq: 4,
        time: 1,
        data: { turn: 1, step: 1, callId: 'old', name: 'bash', arguments: '{}' },
      },
      { type: 'step/end', seq: 5, time: 1, data: { turn: 1, step: 1 } },
      { type: 'turn/end', seq: 6, time: 1, data: { turn: 1, reason: 'interrupted' } },
    ] as never)
    const r = await open([{ text: 'Recovered.' }], { session: legacy })
    // the scripted server answers 400 to an unanswered call, as DeepSeek does
    expect(await r.agent.send('hello')).toMatchObject({ reason: 'completed', text: 'Recovered.' })
    const messages = r.server.requests[0]!.body!.messages!
    expect(messages[2]).toMatchObject({ role: 'tool', tool_call_id: 'old' })
    expect(String(messages[2]!.content)).toContain('TOOL_INTERRUPTED')
  })

  it('closes a bare session left mid-turn, answering its unanswered call before the next model request', async () => {
    const session = Session.create('left-open')
    session.append('turn/start', { turn: 1 })
    session.append('user/message', { message: { role: 'user', content: [{ type: 'text', text: 'go' }] } })
    session.append('step/start', { turn: 1, step: 1 })
    session.append('assistant/message', {
      turn: 1,
      step: 1,
      message: {
        role: 'assistant',
        content: [{ type: 'tool-call', id: 'c1' as never, name: 'bash', arguments: '{}' }],
      },
      stream: { provider: 'p', model: 'm', startedAt: 1, endedAt: 2, chunks: 1 },
    })
    session.append('tool/call', { turn: 1, step: 1, callId: 'c1' as never, name: 'bash', arguments: '{}' })
    const r = await open([{ text: 'fine' }], { session })
    expect(r.events('tool/result')[0]!.data.errorCode).toBe('TOOL_INTERRUPTED')
    expect(r.events('turn/end')[0]!.data.reason).toBe('interrupted')
    expect((await r.agent.send('hello')).reason).toBe('completed')
  })
})

describe('results that fail to commit, continuations', () => {
  it('a result the log refuses is replaced by TOOL_RESULT_UNCOMMITTED and the turn goes on', async () => {
    const picture = defineTool({
      name: 'picture',
      description: 'Returns an image.',
      inputSchema: z.strictObject({}),
      annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
      async call() {
        // a media type the log's schema refuses
        return { content: [{ type: 'image' as const, mediaType: 'image/bmp' as never, data: 'AAAA' }] }
      },
    })
    const r = await open(
      [{ toolCalls: [{ id: 'p1', name: 'picture', arguments: {} }] }, { text: 'Understood.' }],
      {
        tools: [picture],
      },
    )
    const result = await r.agent.send('show me')
    expect(result).toMatchObject({ reason: 'completed', text: 'Understood.' })
    const logged = r.events('tool/result')[0]!.data
    expect(logged.errorCode).toBe('TOOL_RESULT_UNCOMMITTED')
    expect(JSON.stringify(logged.message.content)).toContain('EVENT_DATA_INVALID')
  })

  it('a tool that throws is answered TOOL_FAILED; the step ends and the next turn is well-formed', async () => {
    const broken = defineTool({
      name: 'broken',
      description: 'Throws.',
      inputSchema: z.strictObject({}),
      annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
      async call(): Promise<string> {
        throw new Error('kaput')
      },
    })
    const r = await open(
      [
        { toolCalls: [{ id: 'b1', name: 'broken', arguments: {} }] },
        { text: 'It broke.' },
        { text: 'Still here.' },
      ],
      { tools: [broken] },
    )
    expect((await r.agent.send('try')).text).toBe('It broke.')
    expect(r.events('tool/result')[0]!.data.errorCode).toBe('TOOL_FAILED')
    expect(r.session.unansweredCalls).toEqual([])
    // the scripted server answers HTTP 400 to an unanswered call, as DeepSeek does
    expect(await r.agent.send('again')).toMatchObject({ reason: 'completed', text: 'Still here.' })
  })

  it('a turnStopping continuation goes through user-message validation', async () => {
    const nag = definePlugin({
      name: 'nag',
      setup(ctx) {
        ctx.intercept({ turnStopping: () => ({ action: 'continue', message: 42 as unknown as string }) })
      },
    })
    const r = await open([{ text: 'done' }], { plugins: [nag] })
    const result = await r.agent.send('hi')
    expect(result.reason).toBe('rejected')
    expect(result.error).toMatchObject({
      code: 'AGENT_INPUT_INVALID',
      message: expect.stringContaining("turnStopping of plugin 'nag'"),
    })
  })
})
