// A plugin package in a preset together with the shipped coding preset's plugins (approval,
// permission presets, project instructions, plan mode, hooks, compaction, /model, todo,
// schedule, session titles, subagents, MCP): the package's tool runs in the parent and in a
// subagent's child session — also after a resume that found the package again by its name
// only (the catalog the parent was rebuilt with is the one its children are built with).
import { mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { answerWith } from '@keel/agent/testing'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { type RecordedRequest, type ScriptedResponse, startScriptedServer } from '@keel/scripted-server'
import { JsonlStore } from '@keel/store-jsonl'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { codingPreset, createPresetAgent, loadPresetReport } from '../src/index.js'
import { link, pluginSource, tempDir, writePackage } from './package-fixture.js'
import { ofType, systemOf } from './subagents-rig.js'

const PARENT = 'You are the parent agent of this test.'
const CHILD = 'You are a subagent of a coding agent'

let base: string
let notes: string
beforeAll(async () => {
  base = await tempDir('keel-plugin-coding-')
  notes = await writePackage(
    join(base, 'pkgs', 'notes'),
    { name: '@acme/coding-notes', version: '0.4.0', description: 'notes the model keeps' },
    pluginSource('@acme/coding-notes', 'acme-coding-notes/added', 'note_add'),
  )
})
afterAll(() => rm(base, { recursive: true, force: true }))

describe('a plugin package beside the coding preset plugins', () => {
  it('runs in the parent and in a subagent, before and after a resume by package name', async () => {
    const project = join(base, 'project')
    const home = join(base, 'home')
    await mkdir(join(project, '.keel', 'presets'), { recursive: true })
    await mkdir(home, { recursive: true })
    await link(project, '@acme/coding-notes', notes)
    const plugins = codingPreset.plugins.map((p) =>
      p.use === '@keel/user-approval'
        ? { use: p.use, config: { osSandbox: 'off' } }
        : p.use === '@keel/subagents'
          ? { use: p.use, config: { home: base, keelHome: home } }
          : { use: p.use },
    )
    await writeFile(
      join(project, '.keel', 'presets', 'coding-notes.json'),
      `${JSON.stringify({
        id: 'coding-notes',
        description: 'coding with notes',
        plugins: [...plugins, { use: '@acme/coding-notes', config: { max: 7 } }],
        tools: ['fs', 'shell'],
        policy: { approvalPolicy: 'on_request', sandboxMode: 'workspace_write' },
      })}\n`,
    )
    const report = await loadPresetReport({ keelHome: home, projectDir: project })
    expect(report.broken).toEqual([])

    const routes = new Map<string, ScriptedResponse[]>()
    const route = (marker: string, ...steps: ScriptedResponse[]) =>
      routes.set(marker, [...(routes.get(marker) ?? []), ...steps])
    const server = await startScriptedServer({
      handler: (request: RecordedRequest) => {
        const system = systemOf(request)
        const marker = [...routes.keys()].find((m) => system.includes(m))
        const step = marker === undefined ? undefined : routes.get(marker)!.shift()
        if (step === undefined)
          throw new Error(`no scripted answer for ${JSON.stringify(system.slice(0, 80))}`)
        return step
      },
    })
    const store = new JsonlStore({ home })
    const llm = createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted-model', env: {} })
    const common = {
      llm,
      cwd: project,
      store,
      systemPrompt: PARENT,
      answerers: [answerWith(() => 'allow')],
      retry: { maxRetries: 0 },
    }
    const delegate = (id: string, text: string): ScriptedResponse[] => [
      {
        toolCalls: [{ id, name: 'task', arguments: { description: 'keep a note', prompt: `note ${text}` } }],
      },
      { text: 'delegated' },
    ]
    const childNotes = async (parentEvents: readonly { type: string; data: unknown }[]) => {
      const spawned = ofType(parentEvents as never, 'subagent/spawned')
      const child = await store.load(spawned.at(-1)!.data.child)
      return child.events.filter((e) => e.type === ('acme-coding-notes/added' as never)).map((e) => e.data)
    }
    try {
      // a new session: the preset's catalog holds the package
      route(
        PARENT,
        { toolCalls: [{ id: 'n1', name: 'note_add', arguments: { text: 'milk' } }] },
        { text: 'ok' },
      )
      route(PARENT, ...delegate('t1', 'eggs'))
      route(
        CHILD,
        { toolCalls: [{ id: 'c1', name: 'note_add', arguments: { text: 'eggs' } }] },
        { text: 'noted eggs' },
      )
      const first = await createPresetAgent({
        ...common,
        preset: 'coding-notes',
        presets: report.presets,
        catalog: report.catalog,
        title: 'notes',
      })
      expect(first.composition.plugins.map((p) => p.name)).toEqual([
        ...codingPreset.plugins.map((p) => p.use),
        '@acme/coding-notes',
      ])
      expect(await first.agent.send('note milk')).toMatchObject({ reason: 'completed' })
      expect(await first.agent.send('delegate eggs')).toMatchObject({
        reason: 'completed',
        text: 'delegated',
      })
      expect(await childNotes(first.agent.session.events)).toEqual([{ text: 'eggs' }])
      const id = first.agent.session.id
      await first.agent.close()

      // resumed with the shipped catalog only: the package found again by name, for the child too
      route(PARENT, ...delegate('t2', 'bread'))
      route(
        CHILD,
        { toolCalls: [{ id: 'c2', name: 'note_add', arguments: { text: 'bread' } }] },
        { text: 'noted bread' },
      )
      const resumed = await createPresetAgent({
        ...common,
        session: await store.open(id),
        packages: { projectDir: project, keelHome: home },
      })
      expect(resumed.origin).toBe('rebuilt')
      expect(await resumed.agent.send('delegate bread')).toMatchObject({ reason: 'completed' })
      const settled = ofType(resumed.agent.session.events, 'subagent/settled').at(-1)!
      expect(settled.data).toMatchObject({ outcome: 'completed' })
      expect(await childNotes(resumed.agent.session.events)).toEqual([{ text: 'bread' }])
      await resumed.agent.close()
    } finally {
      await store.close()
      await server.close()
    }
  })
})
