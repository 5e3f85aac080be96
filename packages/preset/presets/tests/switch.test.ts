import { mkdir, mkdtemp, realpath } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAgent } from '@keel/agent'
import type {} from '@keel/compaction'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { type ScriptedResponse, startScriptedServer } from '@keel/scripted-server'
import { JsonlStore } from '@keel/store-jsonl'
import { afterEach, describe, expect, it } from 'vitest'
import {
  checkForkUnder,
  createPresetAgent,
  definePreset,
  minimalPreset,
  PresetError,
  recordedComposition,
  reviewPreset,
} from '../src/index.js'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function rig(script: ScriptedResponse[]) {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'keel-presets-switch-')))
  const cwd = join(base, 'ws')
  await mkdir(cwd, { recursive: true })
  const server = await startScriptedServer({ script })
  const store = new JsonlStore({ home: join(base, 'keel') })
  cleanups.push(async () => {
    await store.close()
    await server.close()
  })
  const llm = createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted-model', env: {} })
  return { cwd, server, store, options: { llm, cwd } }
}

async function failure(promise: Promise<unknown> | (() => unknown)): Promise<PresetError> {
  try {
    await (typeof promise === 'function' ? promise() : promise)
  } catch (error) {
    if (error instanceof PresetError) return error
    throw error
  }
  throw new Error('expected a PresetError')
}

const todoTurn: ScriptedResponse[] = [
  {
    toolCalls: [
      {
        name: 'todo_write',
        arguments: { todos: [{ id: 'a', content: 'Look around', status: 'in_progress' }] },
      },
    ],
  },
  { text: 'Started.' },
]

/** A session under a coding-like preset (approval without the OS sandbox, compaction, todo) with one todo/write. */
async function codingSession(r: Awaited<ReturnType<typeof rig>>) {
  const preset = definePreset({
    id: 'test-coding',
    description: 'approval, compaction, todo',
    plugins: [
      { use: '@keel/user-approval', config: { osSandbox: 'off' } },
      { use: '@keel/compaction' },
      { use: '@keel/todo' },
    ],
    tools: ['fs'],
  })
  const created = await createPresetAgent({ ...r.options, preset, store: r.store })
  expect((await created.agent.send('Start.')).text).toBe('Started.')
  const id = created.agent.session.id
  await created.agent.close()
  return id
}

describe('another preset for an existing session', () => {
  it('a fork may run under a preset that knows every event type of the history it keeps', async () => {
    const r = await rig([...todoTurn, { text: 'Reviewed.' }])
    const id = await codingSession(r)
    const parent = await r.store.load(id)
    // review runs approval and todo: todo/write is known to it; compaction's events are ignorable
    expect(() => checkForkUnder(parent, reviewPreset)).not.toThrow()
    const fork = await r.store.fork(id)
    const switched = await createPresetAgent({ ...r.options, session: fork, preset: 'review' })
    expect(switched.origin).toBe('switched')
    expect(switched.agent.tools.map((t) => t.name)).not.toContain('write_file')
    expect((await switched.agent.send('Review it.')).text).toBe('Reviewed.')
    const forkId = switched.agent.session.id
    await switched.agent.close()
    // resumed later, the fork keeps the preset it switched to
    const reopened = await r.store.open(forkId)
    expect(recordedComposition(reopened.session)?.preset).toBe('review')
    await reopened.close()
  })

  it('refuses a fork under a preset missing a plugin whose events the history holds, naming them, before any fork is made', async () => {
    const r = await rig(todoTurn)
    const id = await codingSession(r)
    const parent = await r.store.load(id)
    const before = checkFailure(() => checkForkUnder(parent, minimalPreset))
    expect(before.code).toBe('PRESET_SWITCH_UNKNOWN_EVENTS')
    expect(before.message).toContain('todo/write (@keel/todo, 1×)')
    expect(before.message).toContain('Fork under a preset that runs @keel/todo')
    // cut before the todo list was written: minimal knows everything kept
    const todoSeq = parent.events.find((e) => e.type === 'todo/write')!.seq
    const firstTurnStart = parent.events.find((e) => e.type === 'turn/start')!.seq
    expect(todoSeq).toBeGreaterThan(firstTurnStart)
    expect(() => checkForkUnder(parent, minimalPreset, { atSeq: firstTurnStart - 1 })).not.toThrow()

    // createPresetAgent refuses the same on a fork made anyway
    const fork = await r.store.fork(id)
    cleanups.push(() => fork.close())
    const refused = await failure(createPresetAgent({ ...r.options, session: fork, preset: 'minimal' }))
    expect(refused.code).toBe('PRESET_SWITCH_UNKNOWN_EVENTS')
    expect(refused.details.unknown).toEqual(['todo/write'])
  })

  it('resuming with another preset is refused with what works instead', async () => {
    const r = await rig(todoTurn)
    const id = await codingSession(r)
    const handle = await r.store.open(id)
    cleanups.push(() => handle.close())
    const refused = await failure(createPresetAgent({ ...r.options, session: handle, preset: 'review' }))
    expect(refused.code).toBe('PRESET_SWITCH_NOT_BLANK')
    expect(refused.message).toContain('keeps the preset it recorded (preset "test-coding")')
    expect(refused.message).toContain(`keel fork ${id} --preset review`)
  })

  it('a session that records no preset (made by a program) takes the one named, when it knows its history', async () => {
    const r = await rig([{ text: 'hello from a program' }, { text: 'resumed under minimal' }])
    const handle = await r.store.create({ header: { cwd: r.cwd } })
    const plain = await createAgent({ ...r.options, session: handle.session })
    await plain.send('hi')
    await plain.close()
    await handle.close()
    const reopened = await r.store.open(handle.session.id)
    cleanups.push(() => reopened.close())
    // without a preset there is nothing to rebuild: the error says how to name one
    const none = await failure(createPresetAgent({ ...r.options, session: reopened }))
    expect(none.code).toBe('PRESET_NOT_FOUND')
    expect(none.message).toContain('--preset')
    const built = await createPresetAgent({ ...r.options, session: reopened, preset: 'minimal' })
    expect(built.origin).toBe('switched')
    expect(recordedComposition(reopened.session)?.preset).toBe('minimal')
    expect(await built.agent.send('go on')).toMatchObject({
      reason: 'completed',
      text: 'resumed under minimal',
    })
  })

  it("a preset's contextWindows reach the agent and the compaction plugin, and are recorded", async () => {
    const r = await rig([{ text: 'ok' }])
    const preset = definePreset({
      id: 'small-model',
      description: 'a model with a small window',
      model: 'small-12k',
      contextWindows: { 'small-12k': 12_000 },
      plugins: [{ use: '@keel/compaction' }],
    })
    const { agent, composition } = await createPresetAgent({ ...r.options, preset, store: r.store })
    expect(composition).toMatchObject({ model: 'small-12k', contextWindows: { 'small-12k': 12_000 } })
    expect(agent.services.get('compaction.run')!.measure()).toMatchObject({ contextWindow: 12_000 })
    await agent.send('hi')
    expect(r.server.requests[0]!.body!.model).toBe('small-12k')
    const id = agent.session.id
    await agent.close()
    // resume rebuilds the window from the record, without the preset's definition
    const resumed = await createPresetAgent({ ...r.options, session: await r.store.open(id) })
    expect(resumed.agent.services.get('compaction.run')!.measure()).toMatchObject({ contextWindow: 12_000 })
    await resumed.agent.close()
  })
})

function checkFailure(fn: () => unknown): PresetError {
  try {
    fn()
  } catch (error) {
    if (error instanceof PresetError) return error
    throw error
  }
  throw new Error('expected a PresetError')
}
