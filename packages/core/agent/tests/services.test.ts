import { Session } from '@keel/session'
import { describe, expect, it } from 'vitest'
import {
  type AgentError,
  createAgent,
  definePlugin,
  orderByServices,
  type PluginDefinition,
  type ServiceNeeds,
} from '../src/index.js'
import { offlineLlm } from '../src/testing.js'

/** A counter one test plugin provides and others use. */
interface Counter {
  next(): number
}

declare module '@keel/tools' {
  interface ServiceMap {
    'test.counter': Counter
    'test.clock': { now(): number }
  }
}

function counterPlugin(name = 'counter', log: string[] = []): PluginDefinition<unknown> {
  return definePlugin({
    name,
    provides: ['test.counter'],
    setup(ctx) {
      log.push(`setup ${name}`)
      let n = 0
      ctx.provide('test.counter', { next: () => ++n })
    },
  })
}

async function start(plugins: PluginDefinition<unknown>[]) {
  return createAgent({
    llm: offlineLlm(),
    session: Session.create(`services-${Math.random()}`),
    cwd: process.cwd(),
    plugins,
  })
}

async function refusal(plugins: PluginDefinition<unknown>[]): Promise<AgentError> {
  try {
    await start(plugins)
  } catch (error) {
    return error as AgentError
  }
  throw new Error('the agent started')
}

describe('typed services between plugins', () => {
  it('a provider is set up before its users whatever the listed order; users reach it through use()', async () => {
    const log: string[] = []
    const user = definePlugin({
      name: 'user',
      requires: ['test.counter'],
      setup(ctx) {
        const counter = ctx.use('test.counter')
        log.push(`setup user, counter at ${counter.next()}`)
      },
    })
    const agent = await start([user, counterPlugin('counter', log)])
    expect(log).toEqual(['setup counter', 'setup user, counter at 1'])
    expect(agent.plugins).toEqual(['counter', 'user'])
    // code outside plugins reads the same service, for the agent's lifetime
    expect(agent.services.get('test.counter')!.next()).toBe(2)
    expect(agent.services.keys()).toEqual(['test.counter'])
    await agent.close()
    expect(agent.services.get('test.counter')).toBeUndefined()
  })

  it('a missing provider is refused before any setup runs, naming the plugin and the key', async () => {
    const log: string[] = []
    const early = definePlugin({ name: 'early', setup: () => void log.push('early ran') })
    const needy = definePlugin({
      name: 'needy',
      requires: ['test.counter'],
      setup: () => void log.push('needy ran'),
    })
    const error = await refusal([early, needy])
    expect(error).toMatchObject({
      code: 'PLUGIN_SERVICE_MISSING',
      details: { plugin: 'needy', key: 'test.counter' },
    })
    expect(error.message).toContain("plugin 'needy' requires service 'test.counter'")
    expect(log).toEqual([])
  })

  it('an optional service is undefined without a provider, and orders its provider first when there is one', async () => {
    const seen: Array<number | undefined> = []
    const reader = definePlugin({
      name: 'reader',
      optional: ['test.counter'],
      setup(ctx) {
        seen.push(ctx.useOptional('test.counter')?.next())
      },
    })
    await (await start([reader])).close()
    await (await start([reader, counterPlugin()])).close()
    expect(seen).toEqual([undefined, 1])
  })

  it('refuses two providers of one key, naming both', async () => {
    const error = await refusal([counterPlugin('a'), counterPlugin('b')])
    expect(error).toMatchObject({
      code: 'PLUGIN_SERVICE_DUPLICATE',
      details: { plugin: 'b', other: 'a', key: 'test.counter' },
    })
  })

  it('refuses a cycle, naming the plugins around it', async () => {
    const a = definePlugin({
      name: 'a',
      provides: ['test.counter'],
      requires: ['test.clock'],
      setup: (ctx) => ctx.provide('test.counter', { next: () => 1 }),
    })
    const b = definePlugin({
      name: 'b',
      provides: ['test.clock'],
      requires: ['test.counter'],
      setup: (ctx) => ctx.provide('test.clock', { now: () => 1 }),
    })
    const error = await refusal([a, b])
    expect(error.code).toBe('PLUGIN_SERVICE_CYCLE')
    expect(error.message).toContain("'a' needs 'b' needs 'a'")
  })

  it('a service provided or used under an undeclared key, or declared and never provided, is a setup error', async () => {
    const sneaky = definePlugin({
      name: 'sneaky',
      setup: (ctx) => ctx.provide('test.counter', { next: () => 1 }),
    })
    expect(await refusal([sneaky])).toMatchObject({
      code: 'PLUGIN_SERVICE_UNDECLARED',
      details: { plugin: 'sneaky' },
    })
    const peeker = definePlugin({ name: 'peeker', setup: (ctx) => void ctx.use('test.counter') })
    expect(await refusal([counterPlugin(), peeker])).toMatchObject({
      code: 'PLUGIN_SERVICE_UNDECLARED',
      details: { plugin: 'peeker', key: 'test.counter' },
    })
    const forgetful = definePlugin({ name: 'forgetful', provides: ['test.counter'], setup: () => {} })
    expect(await refusal([forgetful])).toMatchObject({
      code: 'PLUGIN_SERVICE_NOT_PROVIDED',
      details: { plugin: 'forgetful', key: 'test.counter' },
    })
  })

  it('refuses a malformed key', async () => {
    const odd = definePlugin({ name: 'odd', provides: ['Counter' as 'test.counter'], setup: () => {} })
    expect(await refusal([odd])).toMatchObject({
      code: 'PLUGIN_SERVICE_INVALID',
      details: { key: 'Counter' },
    })
  })
})

describe('orderByServices (pure)', () => {
  const order = (plugins: ServiceNeeds[]) => orderByServices(plugins).map((i) => plugins[i]!.name)
  it('keeps the given order where no service says otherwise, and moves only what must move', () => {
    expect(
      order([
        { name: 'a' },
        { name: 'b', requires: ['test.counter'] },
        { name: 'c' },
        { name: 'd', provides: ['test.counter'] },
        { name: 'e' },
      ]),
    ).toEqual(['a', 'c', 'd', 'b', 'e'])
    expect(order([{ name: 'x', optional: ['test.clock'] }, { name: 'y' }])).toEqual(['x', 'y'])
    expect(order([{ name: 'self', provides: ['test.counter'], requires: ['test.counter'] }])).toEqual([
      'self',
    ])
  })
})
