import { mkdir, mkdtemp, realpath } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { type ScriptedResponse, startScriptedServer } from '@keel/scripted-server'
import { JsonlStore } from '@keel/store-jsonl'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  builtinPlugins,
  createPluginCatalog,
  createPresetAgent,
  definePreset,
  type PresetAgentOptions,
  PresetError,
  recordedComposition,
} from '../src/index.js'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A preset with every plugin, its hooks reading a private home (not the user's settings). */
async function rig(script: ScriptedResponse[] = [{ text: 'done' }]) {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'keel-presets-agent-')))
  const cwd = join(base, 'ws')
  await mkdir(cwd, { recursive: true })
  const server = await startScriptedServer({ script })
  const store = new JsonlStore({ home: join(base, 'keel') })
  cleanups.push(async () => {
    await store.close()
    await server.close()
  })
  const llm = createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted-model', env: {} })
  const preset = definePreset({
    id: 'test-coding',
    description: 'every plugin, private hook settings',
    plugins: [
      { use: '@keel/user-approval', config: { osSandbox: 'off' } },
      {
        use: '@keel/hooks',
        config: { home: base, keelHome: join(base, 'keel'), sources: ['keel-user', 'claude-user'] },
      },
      { use: '@keel/compaction' },
      { use: '@keel/todo', config: { reminderAfterSteps: 3 } },
      { use: '@keel/schedule' },
    ],
    tools: ['fs', 'shell'],
    policy: { approvalPolicy: 'on_request' },
  })
  const base_: Omit<PresetAgentOptions, 'preset'> = { llm, cwd }
  return { base, cwd, server, store, llm, preset, options: base_ }
}

async function failure(promise: Promise<unknown>): Promise<PresetError> {
  try {
    await promise
  } catch (error) {
    if (error instanceof PresetError) return error
    throw error
  }
  throw new Error('expected a PresetError')
}

describe('createPresetAgent', () => {
  it('records the preset and its composition in the header; resume and fork rebuild it exactly', async () => {
    const r = await rig([{ text: 'first' }, { text: 'second' }, { text: 'third' }])
    const created = await createPresetAgent({ ...r.options, preset: r.preset, store: r.store })
    expect(created.origin).toBe('created')
    const agent = created.agent
    // set up in service order: compaction uses the todo plugin's `todo.list`, so todo comes first
    expect(agent.plugins).toEqual([
      '@keel/user-approval',
      '@keel/hooks',
      '@keel/todo',
      '@keel/compaction',
      '@keel/schedule',
    ])
    expect(agent.tools.map((t) => t.name)).toEqual(
      expect.arrayContaining([
        'todo_write',
        'read_file',
        'write_file',
        'edit_file',
        'bash',
        'schedule_create',
      ]),
    )
    expect((await agent.send('hello')).text).toBe('first')
    const id = agent.session.id
    await agent.close()

    const stored = await r.store.load(id)
    expect(stored.header.agentPreset).toBe('test-coding')
    const composition = stored.header.agentComposition!
    const versions = new Map(builtinPlugins().map((p) => [p.use, p.version]))
    expect(versions.get('@keel/todo')).toBe('0.1.0')
    expect(composition.plugins.map((p) => [p.name, p.version])).toEqual(
      ['@keel/user-approval', '@keel/hooks', '@keel/compaction', '@keel/todo', '@keel/schedule'].map(
        (name) => [name, versions.get(name)],
      ),
    )
    expect(composition.plugins[3]!.config).toEqual({ reminderAfterSteps: 3 })
    expect(composition.tools).toEqual(['fs', 'shell'])

    const resumed = await createPresetAgent({ ...r.options, session: await r.store.open(id) })
    expect(resumed.origin).toBe('rebuilt')
    expect(resumed.composition).toEqual(composition)
    expect(resumed.agent.plugins).toEqual(agent.plugins)
    expect((await resumed.agent.send('again')).text).toBe('second')
    await resumed.agent.close()

    const fork = await r.store.fork(id)
    expect(fork.session.header.agentComposition).toEqual(composition)
    const forked = await createPresetAgent({ ...r.options, session: fork })
    expect(forked.origin).toBe('rebuilt')
    expect(forked.agent.tools.map((t) => t.name)).toEqual(resumed.agent.tools.map((t) => t.name))
    await forked.agent.close()
  })

  it('names a recorded plugin that is no longer installed, and a config that no longer validates', async () => {
    const r = await rig()
    const created = await createPresetAgent({ ...r.options, preset: r.preset, store: r.store })
    const id = created.agent.session.id
    await created.agent.close()

    const handle = await r.store.open(id)
    cleanups.push(() => handle.close())
    const withoutSchedule = createPluginCatalog(builtinPlugins().filter((p) => p.use !== '@keel/schedule'))
    const gone = await failure(createPresetAgent({ ...r.options, session: handle, catalog: withoutSchedule }))
    expect(gone.code).toBe('COMPOSITION_UNAVAILABLE')
    expect(gone.message).toContain('plugin @keel/schedule 0.1.0 is not installed')
    expect(gone.message).toContain(`session ${id}`)

    // A newer todo whose config renamed the field the session recorded.
    const newerTodo = builtinPlugins().map((p) =>
      p.use === '@keel/todo'
        ? { ...p, version: '0.2.0', config: z.strictObject({ remindAfter: z.number().optional() }) }
        : p,
    )
    const invalid = await failure(
      createPresetAgent({
        ...r.options,
        session: handle,
        catalog: createPluginCatalog(newerTodo),
      }),
    )
    expect(invalid.code).toBe('COMPOSITION_UNAVAILABLE')
    expect(invalid.message).toMatch(
      /recorded config of @keel\/todo no longer validates with @keel\/todo 0\.2\.0/,
    )
    expect((invalid.details.problems as string[]).length).toBe(1)

    // A version bump alone is a notice, by name.
    const bumped = builtinPlugins().map((p) => (p.use === '@keel/todo' ? { ...p, version: '0.2.0' } : p))
    const rebuilt = await createPresetAgent({
      ...r.options,
      session: handle,
      catalog: createPluginCatalog(bumped),
    })
    expect(rebuilt.notices).toEqual(['@keel/todo was 0.1.0 when recorded; 0.2.0 is installed'])
    await rebuilt.agent.close()
  })

  it('a switch while the session is blank appends agent-preset/selected; later it is refused', async () => {
    const r = await rig([{ text: 'ok' }])
    const blank = await r.store.create({ header: { cwd: r.cwd } })
    const switched = await createPresetAgent({ ...r.options, session: blank, preset: 'minimal' })
    expect(switched.origin).toBe('switched')
    const selected = switched.agent.session.events.filter((e) => e.type === 'agent-preset/selected')
    expect(selected).toHaveLength(1)
    expect(switched.agent.plugins).toEqual([])
    expect(switched.agent.tools.map((t) => t.name)).toEqual([
      'read_file',
      'write_file',
      'edit_file',
      'list_dir',
      'glob',
      'grep',
      'bash',
    ])
    await switched.agent.send('hi')
    const id = switched.agent.session.id
    await switched.agent.close()

    const reopened = await r.store.open(id)
    expect(recordedComposition(reopened.session)?.preset).toBe('minimal')
    const refused = await failure(createPresetAgent({ ...r.options, session: reopened, preset: 'review' }))
    expect(refused.code).toBe('PRESET_SWITCH_NOT_BLANK')
    await reopened.close()
  })

  it('review has no write tools and a read-only sandbox', async () => {
    const r = await rig()
    const { agent, composition } = await createPresetAgent({ ...r.options, preset: 'review', store: r.store })
    const names = agent.tools.map((t) => t.name)
    expect(names).not.toContain('write_file')
    expect(names).not.toContain('edit_file')
    expect(names).toContain('read_file')
    expect(composition.plugins[0]!.config).toMatchObject({ sandboxMode: 'read_only' })
    await agent.close()
  })
})
