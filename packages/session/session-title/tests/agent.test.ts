// Titles inside a real agent against the scripted chat-completions server, through the real
// DeepSeek adapter: the title request is scripted like any other, and asserted as received.
import { createAgent, usePlugin } from '@keel/agent'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { type RecordedRequest, type ScriptedResponse, startScriptedServer } from '@keel/scripted-server'
import { Session } from '@keel/session'
import { afterEach, describe, expect, it } from 'vitest'
import { sessionTitlePlugin, sessionTitleProjection, TITLE_INSTRUCTION } from '../src/index.js'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

type Chat = Array<{ role: string; content?: unknown }>
const chat = (r: RecordedRequest): Chat => (r.body?.messages ?? []) as Chat

async function rig(
  script: ScriptedResponse[],
  config: Record<string, unknown> = {},
  session = Session.create('t'),
  attended = true,
) {
  const server = await startScriptedServer({ script })
  const shown: string[] = []
  const agent = await createAgent({
    llm: createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted-model', env: {} }),
    session,
    cwd: process.cwd(),
    systemPrompt: 'You are careful.',
    plugins: [usePlugin(sessionTitlePlugin, config)],
    // a person at the session: the interactive answerer a terminal lends
    answerers: attended ? [{ name: 'person', kind: 'interactive', answer: () => undefined }] : [],
    observers: [{ onDisplay: (n) => shown.push(`${n.kind}: ${n.text}`) }],
  })
  let closed = false
  cleanups.push(async () => {
    if (!closed) await agent.close()
    await server.close()
  })
  return {
    server,
    agent,
    session,
    shown,
    close: async () => {
      closed = true
      await agent.close()
    },
  }
}

const titled = (title: string): ScriptedResponse => ({
  text: title,
  usage: { promptTokens: 90, completionTokens: 7, cacheHitTokens: 0 },
})

describe('session titles in a real agent', () => {
  it('asks once after the first turn, in its own request, and records the request, its usage and the title', async () => {
    const { server, agent, session, shown } = await rig([
      { text: 'The test expects an exclamation mark.' },
      titled('Title: "Fix the greet test."'),
      { text: 'Done.' },
    ])
    await agent.send('The test in test.mjs fails. Fix greet.mjs.')
    await agent.send('Thanks, also add a comment.')
    expect(server.requests).toHaveLength(3)
    const asked = server.requests[1]!
    expect(asked.body?.tools).toBeUndefined()
    expect(asked.body?.max_tokens).toBe(128)
    expect(chat(asked)).toEqual([
      { role: 'system', content: TITLE_INSTRUCTION },
      {
        role: 'user',
        content:
          '<user>\nThe test in test.mjs fails. Fix greet.mjs.\n</user>\n<assistant>\nThe test expects an exclamation mark.\n</assistant>\nThe title of this session:',
      },
    ])
    // The second turn's request is the conversation: no title text in it.
    expect(JSON.stringify(chat(server.requests[2]!))).not.toContain('greet test')
    const request = session.events.find((e) => e.type === 'session/title-llm-request')!
    expect(request.data).toMatchObject({
      turn: 1,
      provider: 'deepseek',
      model: 'scripted-model',
      outcome: 'title',
      title: 'Fix the greet test',
      usage: { inputTokens: 90, outputTokens: 7 },
      request: { maxTokens: 128, messages: [{ role: 'system' }, { role: 'user' }] },
    })
    const title = session.events.find((e) => e.type === 'session/title')!
    expect(title.data).toEqual({ title: 'Fix the greet test', source: 'model', requestSeq: request.seq })
    // Logged between the turns, after the first turn's end.
    const order = session.events.map((e) => e.type)
    expect(order.indexOf('session/title')).toBeLessThan(order.lastIndexOf('turn/start'))
    expect(order.indexOf('session/title-llm-request')).toBeGreaterThan(order.indexOf('turn/end'))
    expect(shown).toEqual(['session-title: titled the session: Fix the greet test'])
    expect(await agent.runCommand('title')).toBe('title: Fix the greet test (by the model)')
  })

  it('a person’s /title wins: before the request nothing is asked, during it the answer is discarded', async () => {
    const before = await rig([{ text: 'ok' }, { text: 'ok again' }])
    expect(await before.agent.runCommand('title', '  Release   notes ')).toBe('title: Release notes')
    await before.agent.send('write the notes')
    await before.agent.send('more')
    expect(before.server.requests).toHaveLength(2)

    const during = await rig([{ text: 'ok' }, { ...titled('Model title'), headersDelayMs: 150 }])
    await during.agent.send('write the notes')
    await during.agent.runCommand('title', 'Mine')
    await during.close()
    const request = during.session.events.find((e) => e.type === 'session/title-llm-request')!
    expect(request.data).toMatchObject({ outcome: 'discarded', title: 'Model title' })
    expect(during.session.project(sessionTitleProjection)).toMatchObject({ title: 'Mine', source: 'user' })
  })

  it('a failed request is recorded and tried once more after the next turn; closing never hangs on one', async () => {
    const { server, agent, session } = await rig([
      { text: 'ok' },
      { fault: { type: 'server-error' } },
      { text: 'ok 2' },
      titled('Second try'),
      { text: 'ok 3' },
    ])
    await agent.send('one')
    await agent.send('two')
    await agent.send('three')
    expect(server.requests).toHaveLength(5)
    const requests = session.events.filter((e) => e.type === 'session/title-llm-request').map((e) => e.data)
    expect(requests.map((r) => [r.turn, r.outcome, r.error?.code])).toEqual([
      [1, 'failed', 'LLM_SERVER'],
      [2, 'title', undefined],
    ])

    const stalled = await rig([{ text: 'ok' }, { text: 'never', fault: { type: 'stall' } }], {
      timeoutMs: 200,
    })
    await stalled.agent.send('one')
    await stalled.close()
    const failed = stalled.session.events.find((e) => e.type === 'session/title-llm-request')!
    expect(failed.data).toMatchObject({ outcome: 'failed', error: { code: 'TITLE_TIMEOUT' } })
    expect(stalled.session.project(sessionTitleProjection).title).toBeUndefined()
  })

  it('a session started with a title (keel "task") costs no request unless replaceHeaderTitle', async () => {
    const headed = await rig([{ text: 'ok' }], {}, Session.create('h', { title: 'fix the bug' }))
    await headed.agent.send('fix the bug')
    await headed.close()
    expect(headed.server.requests).toHaveLength(1)
    const replaced = await rig(
      [{ text: 'ok' }, titled('Bug fix')],
      { replaceHeaderTitle: true },
      Session.create('r', { title: 'fix the bug' }),
    )
    await replaced.agent.send('fix the bug')
    await replaced.close()
    expect(replaced.session.project(sessionTitleProjection).title).toBe('Bug fix')
  })

  it('a resumed session keeps its title and asks nothing', async () => {
    const first = await rig([{ text: 'ok' }, titled('Kept title')])
    await first.agent.send('one')
    await first.close()
    const resumed = Session.create('t', {}, JSON.parse(JSON.stringify(first.session.events)))
    const second = await rig([{ text: 'ok' }], {}, resumed)
    await second.agent.send('two')
    expect(second.server.requests).toHaveLength(1)
    expect(resumed.project(sessionTitleProjection).title).toBe('Kept title')
  })

  it('a session nobody attends (a program drives it, no interactive answerer) asks nothing', async () => {
    const r = await rig([{ text: 'one' }, { text: 'two' }], {}, Session.create('t'), false)
    await r.agent.send('first')
    await r.agent.send('second')
    expect(r.server.requests).toHaveLength(2)
    expect(r.session.events.some((e) => e.type === 'session/title-llm-request')).toBe(false)
  })
})
