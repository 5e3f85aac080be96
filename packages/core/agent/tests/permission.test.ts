import { describe, expect, it } from 'vitest'
import {
  type ApprovalAnswer,
  type ApprovalAnswerer,
  type ApprovalQuestion,
  definePlugin,
  type Interceptors,
  ruleCovers,
  sessionRulesProjection,
} from '../src/index.js'
import { answerWith } from '../src/testing.js'
import { probeTools, rigsClosedAfterEach } from './helpers.js'

const open = rigsClosedAfterEach()
const poke = (key: string) => ({ toolCalls: [{ id: `call_${key}`, name: 'poke', arguments: { key } }] })

function voter(name: string, interceptors: Interceptors, answerers: ApprovalAnswerer[] = []) {
  return definePlugin({
    name,
    setup(ctx) {
      ctx.intercept(interceptors)
      for (const answerer of answerers) ctx.registerAnswerer(answerer)
    },
  })
}

function scripted(name: string, kind: 'hook' | 'interactive', answers: Array<ApprovalAnswer | undefined>) {
  const asked: ApprovalQuestion[] = []
  const answerer: ApprovalAnswerer = {
    name,
    kind,
    answer(question) {
      asked.push(question)
      return answers.shift()
    },
  }
  return { answerer, asked }
}

describe('one permission chain', () => {
  it('every voter sees every call, also after another denied it; the first deny wins over asks', async () => {
    const seen: string[] = []
    const probes = probeTools(1)
    const r = await open([poke('a'), { text: 'ok' }], {
      tools: probes.tools,
      plugins: [
        voter('sandbox', { beforeTool: () => ({ action: 'deny', reason: 'outside', errorCode: 'OUTSIDE' }) }),
        voter('audit', {
          beforeTool: (info) => {
            seen.push(info.call.id)
            return { action: 'ask', reason: 'audit asks' }
          },
        }),
        voter('broken', {
          beforeTool: () => {
            throw new Error('policy file missing')
          },
        }),
      ],
      answerers: [answerWith(() => 'allow')],
    })
    await r.agent.send('poke')
    expect(seen).toEqual(['call_a'])
    expect(r.events('tool/result')[0]!.data).toMatchObject({ errorCode: 'OUTSIDE', refusedBy: 'sandbox' })
    expect(r.events('approval/asked')).toHaveLength(0)
    expect(probes.log).toEqual([])
  })

  it('an ask goes to hook answerers, then the session rules, then interactive ones (the agent’s before plugins’)', async () => {
    const order: string[] = []
    const hook = scripted('hook', 'hook', [
      undefined,
      { outcome: 'ask', reason: 'a person must decide' },
      undefined,
    ])
    const pluginUi = scripted('plugin-ui', 'interactive', [{ outcome: 'allow-once' }])
    const person = answerWith((q) => {
      order.push(`person ${q.callId} ${q.plugin} (${q.rule.toolName})`)
      return q.callId === 'call_a' ? 'session' : 'deny'
    }, 'person')
    const probes = probeTools(1)
    const r = await open([poke('a'), poke('b'), { text: 'ok' }], {
      tools: probes.tools,
      plugins: [
        voter('asker', { beforeTool: () => ({ action: 'ask', reason: 'asks about every poke' }) }, [
          hook.answerer,
          pluginUi.answerer,
        ]),
      ],
      answerers: [person],
    })
    await r.agent.send('poke')
    // a: hook passes, no rule yet, the person allows for the session
    // b: the hook insists on a person, but the rule from a covers `poke`: allowed without asking
    expect(order).toEqual(['person call_a asker (poke)'])
    expect(pluginUi.asked).toHaveLength(0)
    expect(hook.asked.map((q) => q.callId)).toEqual(['call_a', 'call_b'])
    expect(r.session.project(sessionRulesProjection)).toEqual([{ toolName: 'poke' }])
    const decided = r.events('approval/decided').map((e) => [e.data.outcome, e.data.by, e.data.answerer])
    expect(decided).toEqual([
      ['allowed-session', 'user', 'person'],
      ['allowed-session', 'session-rule', undefined],
    ])
    expect(r.events('approval/asked').map((e) => e.data.plugin)).toEqual(['asker', 'asker'])
    expect(probes.log).toEqual(['begin poke a', 'end poke a', 'begin poke b', 'end poke b'])
  })

  it("a vote's rule scopes 'for this session': a path rule covers only what lies under it", async () => {
    expect(ruleCovers({ toolName: 'read', path: '/etc' }, { toolName: 'read', path: '/etc/hosts' })).toBe(
      true,
    )
    expect(ruleCovers({ toolName: 'read', path: '/etc' }, { toolName: 'read', path: '/etcetera' })).toBe(
      false,
    )
    expect(ruleCovers({ toolName: 'read', path: '/etc/hosts' }, { toolName: 'read' })).toBe(false)
    expect(ruleCovers({ toolName: 'bash', command: 'ls' }, { toolName: 'bash', command: 'ls -la' })).toBe(
      false,
    )
    expect(ruleCovers({ toolName: 'bash' }, { toolName: 'bash', command: 'ls -la' })).toBe(true)
    const person = scripted('person', 'interactive', [{ outcome: 'allow-session' }])
    const probes = probeTools(1)
    const r = await open([poke('a'), { text: 'ok' }], {
      tools: probes.tools,
      plugins: [
        voter('paths', {
          beforeTool: () => ({
            action: 'ask',
            reason: 'outside',
            rule: { toolName: 'poke', path: '/etc/hosts' },
          }),
        }),
      ],
      answerers: [person.answerer],
    })
    await r.agent.send('poke')
    expect(person.asked[0]!.rule).toEqual({ toolName: 'poke', path: '/etc/hosts' })
    expect(r.session.project(sessionRulesProjection)).toEqual([{ toolName: 'poke', path: '/etc/hosts' }])
  })

  it('nobody to answer fails closed; an abort while a person is asked is cancelled', async () => {
    const asker = voter('asker', { beforeTool: () => ({ action: 'ask', reason: 'asks' }) })
    const r = await open([poke('a'), { text: 'ok' }], { tools: probeTools(1).tools, plugins: [asker] })
    await r.agent.send('poke')
    expect(r.events('tool/result')[0]!.data).toMatchObject({
      errorCode: 'APPROVAL_UNAVAILABLE',
      refusedBy: 'asker',
    })

    const waiting: ApprovalAnswerer = {
      name: 'slow',
      kind: 'interactive',
      answer: () => new Promise(() => {}),
    }
    const r2 = await open([poke('b'), { text: 'ok' }], {
      tools: probeTools(1).tools,
      plugins: [asker],
      answerers: [waiting],
    })
    const controller = new AbortController()
    const turn = r2.agent.send('poke', { signal: controller.signal })
    await expect.poll(() => r2.events('approval/asked').length).toBe(1)
    controller.abort()
    expect((await turn).reason).toBe('aborted')
    expect(r2.events('approval/decided').map((e) => e.data.outcome)).toEqual(['cancelled'])
    expect(r2.events('tool/result')[0]!.data.errorCode).toBe('APPROVAL_CANCELLED')
  })
})
