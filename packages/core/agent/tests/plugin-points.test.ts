import { Session } from '@keel/session'
import { describe, expect, it } from 'vitest'
import { definePlugin, type Interceptors, type PluginContext } from '../src/index.js'
import { rigsClosedAfterEach } from './helpers.js'

const open = rigsClosedAfterEach()

/** A plugin with the given interceptors that records what it saw. */
function spy(name: string, interceptors: Interceptors, onSetup?: (ctx: PluginContext<unknown>) => void) {
  return definePlugin({
    name,
    setup(ctx) {
      onSetup?.(ctx)
      ctx.intercept(interceptors)
    },
  })
}

describe('sessionStart', () => {
  it('runs once with startup for a blank log and resume for a history; context becomes a developer message', async () => {
    const sources: string[] = []
    const plugin = spy('start', {
      sessionStart: (info) => {
        sources.push(info.source)
        return { action: 'continue', context: `started as ${info.source}` }
      },
    })
    const r = await open([{ text: 'a' }], { plugins: [plugin] })
    await r.agent.send('hi')
    expect(r.types().slice(0, 4)).toEqual(['turn/start', 'user/message', 'developer/message', 'step/start'])
    expect(JSON.stringify(r.server.requests[0]!.body!.messages)).toContain('started as startup')
    expect(r.events('developer/message')[0]!.data).toMatchObject({ source: 'plugin/start' })
    const resumed = Session.create('resumed')
    resumed.append('user/message', { message: { role: 'user', content: [{ type: 'text', text: 'old' }] } })
    await open([], { plugins: [plugin], session: resumed })
    expect(sources).toEqual(['startup', 'resume'])
  })
})

describe('promptSubmit', () => {
  it('block: the message is neither logged nor sent; the turn ends rejected (PROMPT_BLOCKED)', async () => {
    const plugin = spy('guard', {
      promptSubmit: (info) =>
        messageTextOf(info.message).includes('secret')
          ? { action: 'block', reason: 'no secrets' }
          : { action: 'accept', context: 'checked by guard' },
    })
    const r = await open([{ text: 'fine' }], { plugins: [plugin] })
    const blocked = await r.agent.send('my secret is 42')
    expect(blocked).toMatchObject({ reason: 'rejected', error: { code: 'PROMPT_BLOCKED' } })
    expect(blocked.error!.message).toContain("plugin 'guard' blocked the message: no secrets")
    expect(r.events('user/message')).toHaveLength(0)
    expect(r.server.requests).toHaveLength(0)
    const ok = await r.agent.send('hello')
    expect(ok.reason).toBe('completed')
    expect(r.types().slice(0, 4)).toEqual(['turn/start', 'turn/end', 'turn/start', 'user/message'])
    expect(r.events('developer/message')[0]!.data).toMatchObject({ source: 'plugin/guard' })
  })

  it('a throwing promptSubmit blocks (fails closed)', async () => {
    const plugin = spy('broken', {
      promptSubmit: () => {
        throw new Error('boom')
      },
    })
    const r = await open([], { plugins: [plugin] })
    const result = await r.agent.send('hi')
    expect(result).toMatchObject({ reason: 'rejected', error: { code: 'PROMPT_BLOCKED' } })
  })
})

describe('sessionEnd, beforeCompaction, modelError', () => {
  it('sessionEnd runs on close with reason close', async () => {
    const ends: string[] = []
    const r = await open([], { plugins: [spy('end', { sessionEnd: (info) => void ends.push(info.reason) })] })
    await r.agent.close()
    expect(ends).toEqual(['close'])
  })

  it('host.beforeCompaction: instructions pass along, the first cancel wins', async () => {
    const a = spy('a', {
      beforeCompaction: (info) => ({ action: 'proceed', instructions: `${info.instructions ?? ''}+a` }),
    })
    const b = spy('b', {
      beforeCompaction: (info) =>
        info.trigger === 'manual' ? { action: 'cancel', reason: 'not now' } : { action: 'proceed' },
    })
    const r = await open([], { plugins: [a, b] })
    expect(await r.agent.host.beforeCompaction({ trigger: 'auto', instructions: 'x' })).toEqual({
      decision: { action: 'proceed', instructions: 'x+a' },
    })
    expect(await r.agent.host.beforeCompaction({ trigger: 'manual' })).toEqual({
      decision: { action: 'cancel', reason: 'not now' },
      plugin: 'b',
    })
  })

  it('a plugin reaches the other plugins through ctx.trigger.beforeCompaction', async () => {
    let asked: unknown
    const veto = spy('veto', { beforeCompaction: () => ({ action: 'cancel', reason: 'keep everything' }) })
    const compactor = definePlugin({
      name: 'compactor',
      setup(ctx) {
        ctx.registerCommand('compact', {
          description: 'Compacts.',
          run: async () => {
            asked = await ctx.trigger.beforeCompaction({ trigger: 'manual' })
            return 'asked'
          },
        })
      },
    })
    const r = await open([], { plugins: [veto, compactor] })
    await r.agent.runCommand('compact')
    expect(asked).toEqual({ decision: { action: 'cancel', reason: 'keep everything' }, plugin: 'veto' })
  })

  it('modelError retry re-runs the step once on a context overflow', async () => {
    const seen: string[] = []
    const plugin = spy('compactor', {
      modelError: (info) => {
        seen.push(`${info.turn}/${info.step} ${info.error.code}`)
        return info.error.kind === 'context-overflow' ? { action: 'retry' } : { action: 'fail' }
      },
    })
    const r = await open(
      [
        { fault: { type: 'context-length' } },
        { text: 'Fits now.' },
        { fault: { type: 'context-length' } },
        { fault: { type: 'context-length' } },
      ],
      { plugins: [plugin] },
    )
    expect(await r.agent.send('long')).toMatchObject({ reason: 'completed', text: 'Fits now.' })
    expect(seen).toEqual(['1/1 LLM_CONTEXT_OVERFLOW'])
    // only once per step: a second overflow after the re-run fails the turn
    expect(await r.agent.send('longer')).toMatchObject({
      reason: 'error',
      error: { code: 'LLM_CONTEXT_OVERFLOW' },
    })
    expect(seen).toEqual(['1/1 LLM_CONTEXT_OVERFLOW', '2/1 LLM_CONTEXT_OVERFLOW'])
  })
})

describe('commands and ctx.llm', () => {
  it('registers slash commands the agent runs; plugins see the adapter', async () => {
    let llmSeen: unknown
    const plugin = definePlugin({
      name: 'cmds',
      setup(ctx) {
        llmSeen = ctx.llm
        ctx.registerCommand('echo', { description: 'Echoes.', run: async (args) => `echo: ${args}` })
        ctx.registerCommand('quiet', { description: 'Says nothing.', async run() {} })
        ctx.registerCommand('fail', {
          description: 'Fails.',
          run: async () => {
            throw new Error('nope')
          },
        })
      },
    })
    const r = await open([], { plugins: [plugin] })
    expect(llmSeen).toBeDefined()
    expect((llmSeen as { provider: string }).provider).toBe('deepseek')
    expect(r.agent.commands().map((c) => c.name)).toEqual(['echo', 'quiet', 'fail'])
    expect(await r.agent.runCommand('echo', 'a b')).toBe('echo: a b')
    expect(await r.agent.runCommand('quiet')).toBeUndefined()
    await expect(r.agent.runCommand('missing')).rejects.toMatchObject({ code: 'COMMAND_UNKNOWN' })
    await expect(r.agent.runCommand('fail')).rejects.toMatchObject({ code: 'COMMAND_FAILED' })
  })

  it('refuses a bad or duplicate command name at setup', async () => {
    const twice = definePlugin({
      name: 'twice',
      setup(ctx) {
        ctx.registerCommand('same', { description: '', run: async () => undefined })
        ctx.registerCommand('same', { description: '', run: async () => undefined })
      },
    })
    await expect(open([], { plugins: [twice] })).rejects.toMatchObject({ code: 'COMMAND_INVALID' })
    const bad = definePlugin({
      name: 'bad',
      setup(ctx) {
        ctx.registerCommand('Not OK', { description: '', run: async () => undefined })
      },
    })
    await expect(open([], { plugins: [bad] })).rejects.toMatchObject({ code: 'COMMAND_INVALID' })
  })
})

function messageTextOf(message: { content: ReadonlyArray<{ type: string; text?: string }> }): string {
  return message.content.map((b) => b.text ?? '').join('')
}
