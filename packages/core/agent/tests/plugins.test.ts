import type { LlmAdapter } from '@keel/llm'
import { Session } from '@keel/session'
import { defineTool, type Tool } from '@keel/tools'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  type AgentError,
  createAgent,
  definePlugin,
  type Interceptors,
  type PluginContext,
  type PluginDefinition,
  usePlugin,
} from '../src/index.js'
import { answerWith } from '../src/testing.js'
import { probeTools, recorder, rigsClosedAfterEach } from './helpers.js'

const open = rigsClosedAfterEach()

/** An adapter that must never be called (plugin-host tests that run no turn). */
const silentLlm: LlmAdapter = {
  provider: 'none',
  model: 'none',
  stream() {
    throw new Error('not called')
  },
}

function interceptor(name: string, interceptors: Interceptors): PluginDefinition<unknown> {
  return definePlugin({ name, setup: (ctx) => ctx.intercept(interceptors) })
}

async function rejection(promise: Promise<unknown>): Promise<AgentError> {
  try {
    await promise
  } catch (error) {
    return error as AgentError
  }
  throw new Error('expected a rejection')
}

describe('plugin lifecycle', () => {
  it('validates config with the plugin schema before any setup, naming the plugin and the path', async () => {
    const log: string[] = []
    const first = definePlugin({ name: 'first', setup: () => void log.push('setup first') })
    const reminders = definePlugin({
      name: 'reminders',
      config: z.strictObject({ everySteps: z.number().int().positive(), label: z.string().default('todo') }),
      setup: () => void log.push('setup reminders'),
    })
    const error = await rejection(
      createAgent({
        llm: silentLlm,
        session: Session.create('cfg'),
        cwd: '.',
        plugins: [first, usePlugin(reminders, { everySteps: 'often' })],
      }),
    )
    expect(error.code).toBe('PLUGIN_CONFIG_INVALID')
    expect(error.details).toMatchObject({ plugin: 'reminders', path: 'config.everySteps' })
    expect(error.message).toContain("plugin 'reminders': config.everySteps")
    expect(log).toEqual([])

    const noSchema = await rejection(
      createAgent({
        llm: silentLlm,
        session: Session.create('cfg2'),
        cwd: '.',
        plugins: [usePlugin(first, { x: 1 })],
      }),
    )
    expect(noSchema).toMatchObject({ code: 'PLUGIN_CONFIG_INVALID', details: { plugin: 'first' } })
  })

  it('sets plugins up in order with their parsed config and disposes them in reverse on close', async () => {
    const log: string[] = []
    let closedStore = false
    const make = (name: string) =>
      definePlugin({
        name,
        config: z.strictObject({ n: z.number().default(7) }),
        setup: (ctx: PluginContext<{ n: number }>) => {
          log.push(`setup ${ctx.name} n=${ctx.config.n}`)
          return async () => {
            log.push(`dispose ${name}`)
          }
        },
      })
    const session = Session.create('life')
    const agent = await createAgent({
      llm: silentLlm,
      session: {
        session,
        flush: async () => {},
        close: async () => {
          closedStore = true
        },
      },
      cwd: '.',
      plugins: [usePlugin(make('a'), {}), usePlugin(make('b'), { n: 2 }), make('c')],
    })
    expect(agent.plugins).toEqual(['a', 'b', 'c'])
    await agent.close()
    expect(log).toEqual(['setup a n=7', 'setup b n=2', 'setup c n=7', 'dispose c', 'dispose b', 'dispose a'])
    expect(closedStore).toBe(true)
    await agent.close() // idempotent
    expect(log).toHaveLength(6)
  })

  it('disposes earlier plugins when a setup throws, and names the failing plugin', async () => {
    const log: string[] = []
    const ok = definePlugin({ name: 'ok', setup: () => () => void log.push('dispose ok') })
    const broken = definePlugin({
      name: 'broken',
      setup: () => {
        throw new Error('no database')
      },
    })
    const later = definePlugin({ name: 'later', setup: () => void log.push('setup later') })
    const error = await rejection(
      createAgent({ llm: silentLlm, session: Session.create('s'), cwd: '.', plugins: [ok, broken, later] }),
    )
    expect(error.code).toBe('PLUGIN_SETUP_FAILED')
    expect(error.details).toEqual({ plugin: 'broken' })
    expect(error.message).toContain('no database')
    expect(log).toEqual(['dispose ok'])
  })

  it('runs every disposer even when one throws, closes the store, then reports PLUGIN_DISPOSE_FAILED', async () => {
    const log: string[] = []
    let storeClosed = false
    const session = Session.create('d')
    const agent = await createAgent({
      llm: silentLlm,
      session: {
        session,
        flush: async () => {},
        close: async () => {
          storeClosed = true
        },
      },
      cwd: '.',
      plugins: [
        definePlugin({ name: 'x', setup: () => () => void log.push('dispose x') }),
        definePlugin({
          name: 'y',
          setup: () => () => {
            throw new Error('stuck')
          },
        }),
      ],
    })
    const error = await rejection(agent.close())
    expect(error).toMatchObject({ code: 'PLUGIN_DISPOSE_FAILED', details: { plugins: ['y'] } })
    expect(log).toEqual(['dispose x'])
    expect(storeClosed).toBe(true)
  })

  it('refuses duplicate plugin names, unregistered owned events and duplicate tool names', async () => {
    const p = definePlugin({ name: 'same' })
    expect(
      await rejection(
        createAgent({ llm: silentLlm, session: Session.create('a'), cwd: '.', plugins: [p, p] }),
      ),
    ).toMatchObject({ code: 'PLUGIN_NAME_DUPLICATE' })
    expect(
      await rejection(
        createAgent({
          llm: silentLlm,
          session: Session.create('b'),
          cwd: '.',
          plugins: [definePlugin({ name: 'ghost', events: ['ghost/event'] })],
        }),
      ),
    ).toMatchObject({ code: 'PLUGIN_EVENTS_UNREGISTERED', details: { plugin: 'ghost', type: 'ghost/event' } })

    const probes = probeTools(1)
    let disposed = false
    const withTool = definePlugin({
      name: 'tooling',
      tools: [probes.tools[0]!],
      setup: () => () => {
        disposed = true
      },
    })
    expect(
      await rejection(
        createAgent({
          llm: silentLlm,
          session: Session.create('c'),
          cwd: '.',
          plugins: [withTool],
          tools: [probes.tools[0]!],
        }),
      ),
    ).toMatchObject({ code: 'TOOL_NAME_DUPLICATE' })
    expect(disposed).toBe(true)
  })

  it('allows tools and interceptors only during setup', async () => {
    let saved: PluginContext<unknown> | undefined
    const agent = await createAgent({
      llm: silentLlm,
      session: Session.create('late'),
      cwd: '.',
      plugins: [
        definePlugin({
          name: 'late',
          setup: (ctx) => {
            saved = ctx
          },
        }),
      ],
    })
    expect(() => saved!.registerTool(probeTools(1).tools[0]!)).toThrow(
      expect.objectContaining({ code: 'PLUGIN_CONTEXT_CLOSED' }),
    )
    expect(() => saved!.intercept({})).toThrow(expect.objectContaining({ code: 'PLUGIN_CONTEXT_CLOSED' }))
    await agent.close()
    expect(() => saved!.inject({ role: 'developer', content: [] })).toThrow(
      expect.objectContaining({ code: 'PLUGIN_CONTEXT_CLOSED' }),
    )
  })
})

describe('plugin services in a running agent', () => {
  it('offers plugin tools, shows display notices, injects and enqueues through the inbox', async () => {
    const rec = recorder()
    const probes = probeTools(1)
    let ctxRef: PluginContext<unknown> | undefined
    const plugin = definePlugin({
      name: 'helper',
      tools: [probes.tools[0]!],
      setup: (ctx) => {
        ctxRef = ctx
        ctx.registerTool(probes.tools[1]!)
        ctx.intercept({
          afterTool: () => {
            ctx.display('note', 'a tool ran')
            ctx.inject({ role: 'developer', content: [{ type: 'text', text: 'Reminder from helper.' }] })
            return { action: 'accept' }
          },
        })
      },
    })
    const r = await open(
      [{ toolCalls: [{ name: 'poke', arguments: { key: 'k' } }] }, { text: 'done' }, { text: 'queued turn' }],
      { plugins: [plugin], observers: [rec] },
    )
    expect(r.agent.tools.map((t) => t.name)).toEqual(['peek', 'poke'])
    await r.agent.send('go')
    expect(rec.log).toContain('display helper note a tool ran')
    // the injection lands before step 2, attributed to the plugin
    const types = r.types()
    expect(types.indexOf('developer/message')).toBe(types.lastIndexOf('step/start') - 1)
    expect(r.events('developer/message')[0]!.data.source).toBe('plugin/helper')
    ctxRef!.enqueue({ role: 'user', content: [{ type: 'text', text: 'from the plugin' }] })
    await r.agent.idle()
    expect(r.events('user/message')[1]!.data).toMatchObject({ source: 'plugin/helper' })
    expect(r.events('turn/end').map((e) => e.data.reason)).toEqual(['completed', 'completed'])
  })
})

describe('interceptor decisions', () => {
  const pokeKey = (key: string, id = `call_${key}`) => ({ id, name: 'poke', arguments: { key } })

  it('deny: the model gets an error result with the plugin code and the tool does not run', async () => {
    const probes = probeTools(1)
    const r = await open([{ toolCalls: [pokeKey('secret'), pokeKey('public')] }, { text: 'ok' }], {
      tools: probes.tools,
      plugins: [
        interceptor('allow-all', { beforeTool: () => ({ action: 'allow' }) }),
        interceptor('policy', {
          beforeTool: ({ input }) =>
            (input as { key: string }).key === 'secret'
              ? { action: 'deny', reason: 'secrets are off limits', errorCode: 'POLICY_DENIED' }
              : { action: 'allow' },
        }),
      ],
    })
    await r.agent.send('poke')
    expect(probes.log).toEqual(['begin poke public', 'end poke public'])
    const [denied, allowed] = r.events('tool/result').map((e) => e.data)
    expect(denied).toMatchObject({ errorCode: 'POLICY_DENIED', message: { isError: true } })
    expect(denied!.message.content[0]).toMatchObject({ text: expect.stringContaining("plugin 'policy'") })
    expect(allowed!.errorCode).toBeUndefined()
  })

  it('ask: fails closed without an answerer, follows the answerer otherwise', async () => {
    const asker = interceptor('asker', {
      beforeTool: () => ({ action: 'ask', reason: 'writes need approval' }),
    })
    const probes = probeTools(1)
    const r = await open([{ toolCalls: [pokeKey('a')] }, { text: 'ok' }], {
      tools: probes.tools,
      plugins: [asker],
    })
    await r.agent.send('poke')
    expect(r.events('tool/result')[0]!.data.errorCode).toBe('APPROVAL_UNAVAILABLE')
    expect(r.events('approval/decided')[0]!.data).toMatchObject({ outcome: 'unavailable', by: 'none' })
    expect(probes.log).toEqual([])

    const questions: string[] = []
    const probes2 = probeTools(1)
    const r2 = await open([{ toolCalls: [pokeKey('yes'), pokeKey('no')] }, { text: 'ok' }], {
      tools: probes2.tools,
      plugins: [asker],
      answerers: [
        answerWith((q) => {
          questions.push(`${q.plugin}: ${q.reason} (${q.callId})`)
          return (q.input as { key: string }).key === 'yes' ? 'allow' : 'deny'
        }),
      ],
    })
    await r2.agent.send('poke')
    expect(questions).toEqual([
      'asker: writes need approval (call_yes)',
      'asker: writes need approval (call_no)',
    ])
    expect(probes2.log).toEqual(['begin poke yes', 'end poke yes'])
    expect(r2.events('tool/result').map((e) => e.data.errorCode)).toEqual([undefined, 'USER_REJECTED'])
  })

  it('the first non-default decision in plugin order wins; a throwing interceptor fails closed', async () => {
    const probes = probeTools(1)
    const r = await open([{ toolCalls: [pokeKey('a')] }, { text: 'ok' }], {
      tools: probes.tools,
      plugins: [
        interceptor('first', {
          beforeTool: () => ({ action: 'deny', reason: 'first says no', errorCode: 'FIRST' }),
        }),
        interceptor('second', { beforeTool: () => ({ action: 'ask', reason: 'second asks' }) }),
      ],
      answerers: [answerWith(() => 'allow')],
    })
    await r.agent.send('poke')
    expect(r.events('tool/result')[0]!.data.errorCode).toBe('FIRST')

    const probes2 = probeTools(1)
    const r2 = await open([{ toolCalls: [pokeKey('a')] }, { text: 'ok' }], {
      tools: probes2.tools,
      plugins: [
        interceptor('broken', {
          beforeTool: () => {
            throw new Error('policy file missing')
          },
        }),
      ],
    })
    await r2.agent.send('poke')
    expect(probes2.log).toEqual([])
    expect(r2.events('tool/result')[0]!.data.errorCode).toBe('INTERCEPTOR_FAILED')
  })

  it('block: the tool ran but the model gets the reason instead of the output', async () => {
    const probes = probeTools(1)
    const seen: string[] = []
    const r = await open([{ toolCalls: [pokeKey('a')] }, { text: 'ok' }], {
      tools: probes.tools,
      plugins: [
        interceptor('redactor', {
          afterTool: ({ output }) => {
            seen.push((output.content[0] as { text: string }).text)
            return { action: 'block', reason: 'output contained a token' }
          },
        }),
      ],
    })
    await r.agent.send('poke')
    expect(probes.log).toEqual(['begin poke a', 'end poke a'])
    expect(seen).toEqual(['poked a'])
    const result = r.events('tool/result')[0]!.data
    expect(result.errorCode).toBe('TOOL_RESULT_BLOCKED')
    expect(JSON.stringify(result.message.content)).not.toContain('poked a')
    expect(JSON.stringify(result.message.content)).toContain('output contained a token')
  })

  it('reject: a refused step ends the turn as rejected without calling the model', async () => {
    const probes = probeTools(1)
    const r = await open([{ toolCalls: [pokeKey('a')] }, { text: 'never' }], {
      tools: probes.tools,
      plugins: [
        interceptor('budget', {
          beforeStep: ({ step }) =>
            step >= 2 ? { action: 'reject', reason: 'step budget spent' } : { action: 'enter' },
        }),
      ],
    })
    const result = await r.agent.send('go')
    expect(result).toMatchObject({ reason: 'rejected', error: { code: 'STEP_REJECTED' } })
    expect(result.error!.message).toContain('step budget spent')
    expect(r.server.requests).toHaveLength(1)
    expect(r.events('step/start')).toHaveLength(1)
    expect(r.types().slice(-2)).toEqual(['step/end', 'turn/end'])
  })

  it('continue: a stopping turn gets one more user-side message and another step; stop ends it', async () => {
    let asked = 0
    const r = await open([{ text: 'first answer' }, { text: 'second answer' }], {
      plugins: [
        interceptor('keep-going', {
          turnStopping: () =>
            asked++ === 0 ? { action: 'continue', message: 'Check your work.' } : { action: 'stop' },
        }),
      ],
    })
    const result = await r.agent.send('go')
    expect(result).toMatchObject({ reason: 'completed', text: 'second answer' })
    expect(asked).toBe(2)
    const users = r.events('user/message').map((e) => e.data)
    expect(users[1]).toEqual({
      message: { role: 'user', content: [{ type: 'text', text: 'Check your work.' }] },
      source: 'plugin/keep-going',
    })
    expect(r.server.requests[1]!.body!.messages!.map((m) => m.role)).toEqual(['user', 'assistant', 'user'])
  })

  it('sees the validated input and the tool facts', async () => {
    const infos: unknown[] = []
    const located: Tool<{ path: string }> = defineTool({
      name: 'touch',
      description: 'Touches a path.',
      inputSchema: z.strictObject({ path: z.string() }),
      annotations: { readOnly: false, destructive: false, openWorld: false, idempotent: true },
      facts: (input, cwd) => ({ rawPaths: [input.path], resolvedPaths: [`${cwd}/${input.path}`] }),
      call: async () => 'touched',
    })
    const r = await open([{ toolCalls: [{ name: 'touch', arguments: { path: 'a.txt' } }] }, { text: 'ok' }], {
      tools: [located],
      cwd: '/work',
      plugins: [
        interceptor('spy', {
          beforeTool: ({ input, facts, tool }) => {
            infos.push({ input, facts, tool: tool.name })
            return { action: 'allow' }
          },
        }),
      ],
    })
    await r.agent.send('touch')
    expect(infos).toEqual([
      {
        input: { path: 'a.txt' },
        facts: { rawPaths: ['a.txt'], resolvedPaths: ['/work/a.txt'] },
        tool: 'touch',
      },
    ])
  })
})

describe('turns queued during setup', () => {
  it('wait until every plugin is set up, then run', async () => {
    const log: string[] = []
    const r = await open([{ text: 'good morning' }], {
      plugins: [
        definePlugin({
          name: 'early',
          setup: (ctx) => {
            ctx.enqueue(
              { role: 'user', content: [{ type: 'text', text: 'fired at startup' }] },
              { source: 'schedule/s1' },
            )
            log.push('early set up')
          },
        }),
        interceptor('late', {
          beforeStep: () => {
            log.push('late intercepted')
            return { action: 'enter' }
          },
        }),
      ],
    })
    await r.agent.idle()
    expect(log).toEqual(['early set up', 'late intercepted'])
    expect(r.events('user/message')[0]!.data).toMatchObject({ source: 'schedule/s1' })
    expect(r.events('turn/end')[0]!.data.reason).toBe('completed')
  })
})
