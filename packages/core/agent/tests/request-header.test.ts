import { buildRequestBody } from '@keel/deepseek'
import { Session, type SessionEvent } from '@keel/session'
import { defineTool, ToolRegistry } from '@keel/tools'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  type ActiveModelService,
  definePlugin,
  type ModelChoice,
  type ModelRoute,
  toolsDigestOf,
  usePlugin,
} from '../src/index.js'
import { type Rig, rig } from './helpers.js'

declare module '@keel/tools' {
  interface ServiceMap {
    'model.active': ActiveModelService
  }
}

let current: Rig | undefined
afterEach(async () => {
  await current?.close()
  current = undefined
})

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a key up.',
  inputSchema: z.strictObject({ key: z.string() }),
  annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
  call: async ({ key }) => `value of ${key}`,
})

/** A plugin providing `model.active` whose choice the test sets. */
function selector(): {
  plugin: ReturnType<typeof definePlugin>
  choose(choice: ModelChoice | undefined): void
} {
  let choice: ModelChoice | undefined
  const service: ActiveModelService = { current: () => choice }
  return {
    plugin: definePlugin({
      name: 'test-selector',
      provides: ['model.active'],
      setup(ctx) {
        ctx.provide('model.active', service)
      },
    }),
    choose: (next) => {
      choice = next
    },
  }
}

/** The request a step sent, rebuilt from the log alone: messages folded up to its header, the header's fields. */
function rebuild(
  events: readonly SessionEvent[],
  headerSeq: number,
  tools: Parameters<typeof buildRequestBody>[0]['tools'],
) {
  const header = events[headerSeq]!
  if (header.type !== 'request/header') throw new Error(`seq ${headerSeq} is ${header.type}`)
  const prefix = Session.create(
    'rebuilt',
    {},
    events.slice(0, headerSeq + 1).map((e) => JSON.parse(JSON.stringify(e))),
  )
  const { maxTokens, reasoningEffort, model } = header.data
  return {
    header: header.data,
    body: buildRequestBody(
      {
        messages: prefix.deriveMessages(),
        ...(tools === undefined ? {} : { tools }),
        ...(maxTokens === undefined ? {} : { maxTokens }),
        ...(reasoningEffort === undefined ? {} : { reasoningEffort }),
      },
      { model, images: 'placeholder' },
    ),
  }
}

describe('request/header and request/context', () => {
  it('rebuilds a step’s exact request from the log and finds what the server received', async () => {
    current = await rig(
      [
        { toolCalls: [{ name: 'lookup', arguments: { key: 'a' } }] },
        { text: 'The value is a.' },
        { text: 'Again.' },
      ],
      { tools: [lookup], systemPrompt: 'You look things up.', maxTokens: 900 },
    )
    await current.agent.send('What is a?')
    await current.agent.send('Once more.')
    const events = current.session.events
    const headers = current.events('request/header')
    // recorded once: the second step and the next turn sent the same header
    expect(headers).toHaveLength(1)
    expect(current.events('request/context')).toHaveLength(1)
    expect(current.events('request/context')[0]!.data).toMatchObject({
      provider: 'deepseek',
      endpoint: current.server.baseURL,
      model: 'scripted-model',
      modelSource: 'adapter',
      contextWindow: 128_000,
      windowSource: 'adapter',
    })
    // the tools are code, not log: their specs come from the registry, checked against the logged digest
    const specs = new ToolRegistry(current.agent.tools).specs()
    expect(toolsDigestOf(specs)).toBe(headers[0]!.data.toolsDigest)
    const { header, body } = rebuild(events, headers[0]!.seq, specs)
    expect(header).toMatchObject({
      turn: 1,
      step: 1,
      model: 'scripted-model',
      maxTokens: 900,
      tools: ['lookup'],
    })
    const received = current.server.requests[0]!.body!
    expect(body.messages).toEqual(received.messages)
    expect(body.model).toBe(received.model)
    expect(body.max_tokens).toBe(received.max_tokens)
    expect(body.tools).toEqual(received.tools)
    // the digest in the log is the digest of the tool specs the server received
    const wire = received.tools!.map((t) => ({
      name: t.function.name,
      description: t.function.description ?? '',
      parameters: t.function.parameters ?? {},
    }))
    expect(header.toolsDigest).toBe(toolsDigestOf(wire))
    expect(header.systemDigest).toMatch(/^sha256:[0-9a-f]{64}$/)

    // a later step without a header of its own: the latest header plus the log up to its step/start
    const stepStarts = events.filter((e) => e.type === 'step/start')
    const third = stepStarts[2]!
    const later = Session.create(
      'later',
      {},
      events.slice(0, third.seq + 1).map((e) => JSON.parse(JSON.stringify(e))),
    )
    const rebuilt = buildRequestBody(
      { messages: later.deriveMessages(), tools: specs, maxTokens: header.maxTokens! },
      { model: header.model, images: 'placeholder' },
    )
    expect(rebuilt.messages).toEqual(current.server.requests[2]!.body!.messages)
  })

  it('records a switch through model.active: the next step sends the chosen model, effort and its max_tokens', async () => {
    const choice = selector()
    current = await rig([{ text: 'one' }, { text: 'two' }], {
      plugins: [usePlugin(choice.plugin)],
      adapter: {
        capabilities: {
          'big-model': { contextWindow: 64_000, maxOutputTokens: 2_000, reasoningEfforts: ['low', 'high'] },
        },
      },
    })
    await current.agent.send('first')
    choice.choose({ model: 'big-model', reasoningEffort: 'high' })
    await current.agent.send('second')
    const [first, second] = current.server.requests.map((r) => r.body!)
    expect(first).toMatchObject({ model: 'scripted-model', max_tokens: 8_192 })
    expect(first!.reasoning_effort).toBeUndefined()
    expect(second).toMatchObject({ model: 'big-model', max_tokens: 2_000, reasoning_effort: 'high' })
    const contexts = current.events('request/context').map((e) => e.data)
    expect(contexts).toHaveLength(2)
    expect(contexts[1]).toMatchObject({
      turn: 2,
      step: 1,
      model: 'big-model',
      modelSource: 'selection',
      contextWindow: 64_000,
      windowSource: 'adapter',
      maxOutputTokens: 2_000,
    })
    const headers = current.events('request/header').map((e) => e.data)
    expect(headers.map((h) => [h.model, h.maxTokens, h.reasoningEffort])).toEqual([
      ['scripted-model', 8_192, undefined],
      ['big-model', 2_000, 'high'],
    ])
    // both are informational: a reader may skip them
    expect(current.events('request/header').every((e) => e.ignorable === true)).toBe(true)
  })

  it('a model.active answer that is not a choice fails the turn, naming the plugin, before anything is sent', async () => {
    const choice = selector()
    current = await rig([{ text: 'never' }], { plugins: [usePlugin(choice.plugin)] })
    choice.choose({ model: '' })
    const result = await current.agent.send('hi')
    expect(result).toMatchObject({ reason: 'error', error: { code: 'MODEL_CHOICE_INVALID' } })
    expect(result.error!.message).toContain(
      "plugin 'test-selector' answered model.active.current() with an invalid choice: model",
    )
    expect(current.server.requests).toHaveLength(0)
  })

  it('tells plugins the route through ctx.model(): the selection, the contextWindows option, the adapter', async () => {
    const choice = selector()
    let seen: (() => ModelRoute) | undefined
    let info: ((model: string) => unknown) | undefined
    const probe = definePlugin({
      name: 'probe',
      optional: ['model.active'],
      setup(ctx) {
        seen = () => ctx.model()
        info = (model) => ctx.modelInfo(model)
      },
    })
    current = await rig([], {
      plugins: [usePlugin(choice.plugin), usePlugin(probe)],
      model: 'small-model',
      contextWindows: { 'small-model': 12_000 },
      maxTokens: 1_000,
    })
    expect(seen!()).toMatchObject({
      model: 'small-model',
      source: 'option',
      contextWindow: 12_000,
      windowSource: 'option',
      maxTokens: 1_000,
      provider: 'deepseek',
    })
    choice.choose({ model: 'deepseek-v4-pro', contextWindow: 200_000 })
    expect(seen!()).toMatchObject({
      model: 'deepseek-v4-pro',
      source: 'selection',
      contextWindow: 200_000,
      windowSource: 'selection',
      reasoningEfforts: ['low', 'high', 'max'],
    })
    expect(info!('deepseek-chat')).toMatchObject({
      contextWindow: 128_000,
      maxOutputTokens: 8_192,
      reasoningEfforts: [],
    })
  })
})
