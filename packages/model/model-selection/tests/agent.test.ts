// /model in a real agent: the request the scripted server receives, the log through the real
// JSONL store, resume and fork, and compaction budgeting with the selected model's window.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Agent, createAgent, type StoreHandle, usePlugin } from '@keel/agent'
import { compactionPlugin } from '@keel/compaction'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { type ScriptedServer, type ScriptHandler, startScriptedServer } from '@keel/scripted-server'
import { JsonlStore } from '@keel/store-jsonl'
import { afterEach, describe, expect, it } from 'vitest'
import { modelSelectionPlugin, selectionProjection } from '../src/index.js'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

const capabilities = {
  'tiny-model': { contextWindow: 6_000, maxOutputTokens: 500, reasoning: false },
}

async function rig(handler: ScriptHandler = (r) => ({ text: `answer ${r.index}` })) {
  const root = mkdtempSync(join(tmpdir(), 'keel-model-selection-'))
  const server = await startScriptedServer({ handler })
  const store = new JsonlStore({ home: root })
  cleanups.push(async () => {
    await server.close()
    await store.close()
    rmSync(root, { recursive: true, force: true })
  })
  const llm = createDeepSeekAdapter({
    baseURL: server.baseURL,
    model: 'deepseek-v4-flash',
    env: {},
    capabilities,
  })
  const displayed: string[] = []
  const open = async (session: StoreHandle, compaction = false): Promise<Agent> => {
    const agent = await createAgent({
      llm,
      session,
      cwd: root,
      observers: [{ onDisplay: (n) => void displayed.push(`${n.kind}: ${n.text}`) }],
      systemPrompt: 'You are careful.',
      plugins: [
        usePlugin(modelSelectionPlugin, { models: ['deepseek-v4-pro'] }),
        ...(compaction ? [usePlugin(compactionPlugin(), {})] : []),
      ],
    })
    cleanups.push(() => agent.close())
    return agent
  }
  return { server, store, open, displayed }
}

const models = (server: ScriptedServer) => server.requests.map((r) => r.body?.model)

describe('/model', () => {
  it('switches the following requests (model, reasoning_effort, max_tokens), recorded as model/selection and request/header', async () => {
    const r = await rig()
    const agent = await r.open(await r.store.create({ id: 'switch' }))
    await agent.send('first')
    expect(await agent.runCommand('model')).toMatch(
      /^Model: deepseek-v4-flash — the endpoint adapter's default\n {2}window 1,048,576 tokens/,
    )
    const reply = await agent.runCommand('model', 'deepseek-v4-pro high')
    expect(reply).toBe('Model: deepseek-v4-pro (effort high), window 1,048,576 tokens, from the next step.')
    await agent.send('second')
    const [first, second] = r.server.requests.map((q) => q.body!)
    expect(first).toMatchObject({ model: 'deepseek-v4-flash', max_tokens: 384_000 })
    expect(first!.reasoning_effort).toBeUndefined()
    expect(second).toMatchObject({ model: 'deepseek-v4-pro', max_tokens: 384_000, reasoning_effort: 'high' })
    const selection = agent.session.events.find((e) => e.type === 'model/selection')!
    expect(selection.data).toEqual({
      model: 'deepseek-v4-pro',
      reasoningEffort: 'high',
      contextWindow: 1_048_576,
      source: 'user',
      previous: 'deepseek-v4-flash',
    })
    // the switch is a logged command run; the step after it records the new header
    const done = agent.session.events.find((e) => e.type === 'command/done' && e.seq > selection.seq)!
    expect(done.data).toMatchObject({ kind: 'success', text: reply })
    const headers = agent.session.events.filter((e) => e.type === 'request/header').map((e) => e.data)
    expect(headers.map((h) => [h.model, h.reasoningEffort])).toEqual([
      ['deepseek-v4-flash', undefined],
      ['deepseek-v4-pro', 'high'],
    ])
    const contexts = agent.session.events.filter((e) => e.type === 'request/context').map((e) => e.data)
    expect(contexts.at(-1)).toMatchObject({
      model: 'deepseek-v4-pro',
      modelSource: 'selection',
      turn: 2,
      step: 1,
    })

    // the same again changes nothing and records nothing
    expect(await agent.runCommand('model', 'deepseek-v4-pro high')).toBe(
      'Model unchanged: already using deepseek-v4-pro (effort high).',
    )
    expect(agent.session.events.filter((e) => e.type === 'model/selection')).toHaveLength(1)
    // back to the default
    expect(await agent.runCommand('model', 'default')).toMatch(/^Model: deepseek-v4-flash \(the default\)/)
    await agent.send('third')
    expect(models(r.server)).toEqual(['deepseek-v4-flash', 'deepseek-v4-pro', 'deepseek-v4-flash'])
  })

  it('refuses an effort the model does not take, naming its levels, and records nothing', async () => {
    const r = await rig()
    const agent = await r.open(await r.store.create({ id: 'refuse' }))
    await expect(agent.runCommand('model', 'deepseek-v4-pro medium')).rejects.toMatchObject({
      code: 'MODEL_EFFORT_INVALID',
      message: "deepseek-v4-pro takes reasoning effort low, high, max; not 'medium'",
    })
    await expect(agent.runCommand('model', 'tiny-model high')).rejects.toMatchObject({
      code: 'MODEL_EFFORT_UNSUPPORTED',
    })
    await expect(agent.runCommand('model', 'a b c')).rejects.toMatchObject({ code: 'MODEL_COMMAND_USAGE' })
    expect(agent.session.events.some((e) => e.type === 'model/selection')).toBe(false)
    const failed = agent.session.events.filter((e) => e.type === 'command/done').map((e) => e.data.errorCode)
    expect(failed).toEqual(['MODEL_EFFORT_INVALID', 'MODEL_EFFORT_UNSUPPORTED', 'MODEL_COMMAND_USAGE'])
  })

  it('says a switch once: /model answers it, a switch by code shows it as a notice', async () => {
    const r = await rig()
    const agent = await r.open(await r.store.create({ id: 'once' }))
    expect(await agent.runCommand('model', 'deepseek-v4-pro high')).toMatch(/^Model: deepseek-v4-pro/)
    expect(r.displayed).toEqual([])
    agent.services.get('model.selection')!.select({ model: 'deepseek-v4-flash', source: 'plugin' })
    expect(r.displayed).toEqual([expect.stringMatching(/^model: Model: deepseek-v4-flash/)])
  })

  it('takes an id the adapter does not know, and says its window is assumed', async () => {
    const r = await rig()
    const agent = await r.open(await r.store.create({ id: 'unknown' }))
    expect(await agent.runCommand('model', 'deepseek-v4-prro')).toBe(
      'Model: deepseek-v4-prro, window 128,000 tokens (assumed: the endpoint adapter does not know deepseek-v4-prro; check the id), from the next step.',
    )
    // a model the agent was told about (the capabilities option) is known
    expect(await agent.runCommand('model', 'tiny-model')).toBe(
      'Model: tiny-model, window 6,000 tokens, from the next step.',
    )
  })

  it('resume and fork keep the selection', async () => {
    const r = await rig()
    const agent = await r.open(await r.store.create({ id: 'keep' }))
    await agent.runCommand('model', 'deepseek-v4-pro low', { source: 'cli' })
    await agent.send('first')
    await agent.close()

    const resumed = await r.open(await r.store.open('keep'))
    await resumed.send('after resume')
    await resumed.close()
    const fork = await r.open(await r.store.fork('keep'))
    await fork.send('in the fork')
    expect(r.server.requests.map((q) => [q.body?.model, q.body?.reasoning_effort])).toEqual([
      ['deepseek-v4-pro', 'low'],
      ['deepseek-v4-pro', 'low'],
      ['deepseek-v4-pro', 'low'],
    ])
    expect(fork.session.project(selectionProjection).latest).toMatchObject({
      model: 'deepseek-v4-pro',
      source: 'cli',
    })
  })

  it('compaction budgets with the selected model’s window and writes the summary with it', async () => {
    const r = await rig((request) => {
      const last = request.body?.messages?.at(-1)
      if (typeof last?.content === 'string' && last.content.startsWith('Context compaction:'))
        return { text: '## Goal\nGo on.' }
      return { text: 'x'.repeat(4_000) }
    })
    const agent = await r.open(await r.store.create({ id: 'compact' }), true)
    await agent.runCommand('model', 'tiny-model')
    expect(agent.services.get('compaction.run')!.measure()).toMatchObject({ contextWindow: 6_000 })
    for (let turn = 1; turn <= 8; turn++) await agent.send(`task ${turn}`)
    const starts = agent.session.events.filter((e) => e.type === 'compaction/start').map((e) => e.data)
    expect(starts.length).toBeGreaterThan(0)
    expect(starts[0]).toMatchObject({
      trigger: 'auto',
      model: 'tiny-model',
      contextWindow: 6_000,
      windowSource: 'selection',
      reserveTokens: 500,
    })
    const summaries = r.server.requests.filter((q) => {
      const last = q.body?.messages?.at(-1)
      return typeof last?.content === 'string' && last.content.startsWith('Context compaction:')
    })
    expect(summaries.length).toBeGreaterThan(0)
    expect(summaries.every((q) => q.body?.model === 'tiny-model')).toBe(true)
  })
})
