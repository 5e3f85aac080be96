// Plugins Keel does not ship, named in a preset by package name or relative path: resolved
// from the project's node_modules, then $KEEL_HOME's; imported (their events register); checked
// to export a plugin definition named as the package; their config validated — every problem
// naming the preset file, the JSON path and the package.
import { cp, mkdir, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { startScriptedServer } from '@keel/scripted-server'
import { getEventRegistration } from '@keel/session'
import { JsonlStore } from '@keel/store-jsonl'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import {
  builtinCatalog,
  createPresetAgent,
  findPreset,
  loadPresetReport,
  type PresetReport,
} from '../src/index.js'
import { link, pluginSource, tempDir, writePackage } from './package-fixture.js'

let base: string
/** The one @acme/notes package (linked into each project: one module, registered once). */
let notes: string
beforeAll(async () => {
  base = await tempDir('keel-plugin-package-')
  notes = await writePackage(
    join(base, 'pkgs', 'notes'),
    { name: '@acme/notes', version: '1.2.3', description: 'notes the model keeps' },
    pluginSource('@acme/notes', 'acme-notes/added', 'note_add'),
  )
})
afterAll(() => rm(base, { recursive: true, force: true }))

let count = 0
/** A project and a KEEL_HOME, each with a presets directory. */
async function place() {
  const root = join(base, `case-${++count}`)
  const project = join(root, 'project')
  const home = join(root, 'home')
  await mkdir(join(project, '.keel', 'presets'), { recursive: true })
  await mkdir(join(home, 'presets'), { recursive: true })
  const preset = async (where: 'project' | 'home', plugins: unknown[]) => {
    const file =
      where === 'project'
        ? join(project, '.keel', 'presets', 'notes.json')
        : join(home, 'presets', 'notes.json')
    await writeFile(
      file,
      `${JSON.stringify({ id: 'notes', description: 'with notes', plugins, tools: [] }, null, 2)}\n`,
    )
    return file
  }
  const report = () => loadPresetReport({ keelHome: home, projectDir: project })
  return { root, project, home, preset, report }
}

function problemsOf(report: PresetReport) {
  return report.broken.flatMap((b) => b.problems.map((p) => ({ file: b.file, ...p })))
}

describe('a preset naming a plugin package', () => {
  it('finds it in the project node_modules (or a parent directory), imports it, and records its name and version', async () => {
    const p = await place()
    await link(p.root, '@acme/notes', notes) // a parent of the project, as Node resolves
    await p.preset('project', [{ use: '@acme/notes', config: { max: 5 } }])
    const report = await p.report()
    expect(report.broken).toEqual([])
    const provider = report.catalog.get('@acme/notes')!
    expect(provider).toMatchObject({
      use: '@acme/notes',
      version: '1.2.3',
      description: 'notes the model keeps',
      source: notes,
    })
    expect(getEventRegistration('acme-notes/added')?.owner).toBe('@acme/notes') // registered on import
    expect(findPreset(report.presets, 'notes').preset.plugins).toEqual([
      { use: '@acme/notes', config: { max: 5 } },
    ])
    expect(builtinCatalog().has('@acme/notes')).toBe(false) // the shipped catalog is untouched
  })

  it('looks in $KEEL_HOME/node_modules after the project, and takes a relative path from the project or KEEL_HOME', async () => {
    const p = await place()
    await link(p.home, '@acme/notes', notes)
    await p.preset('home', [{ use: '@acme/notes' }])
    expect((await p.report()).catalog.get('@acme/notes')?.source).toBe(notes)

    const q = await place()
    await link(q.home, '@acme/notes', notes)
    await writeFile(
      join(q.home, 'presets', 'home.json'),
      JSON.stringify({ id: 'home', description: 'd', plugins: [{ use: '@acme/notes' }] }),
    )
    await cp(notes, join(q.project, 'plugins', 'notes'), { recursive: true, verbatimSymlinks: true })
    await q.preset('project', [{ use: './plugins/notes' }])
    // another copy of a package already loaded under that name is refused, naming both
    const copy = problemsOf(await q.report())
    expect(copy).toEqual([
      expect.objectContaining({
        code: 'PRESET_PLUGIN_INVALID',
        path: '$.plugins[0].use',
        reason: `plugin @acme/notes is already loaded from ${notes}; ${join(q.project, 'plugins', 'notes')} is another copy`,
      }),
    ])

    const r = await place()
    await writeFile(
      join(r.project, '.keel', 'presets', 'notes.json'),
      JSON.stringify({ id: 'notes', description: 'd', plugins: [{ use: '../../pkgs/notes' }] }),
    )
    const report = await r.report()
    expect(report.broken).toEqual([])
    // the preset names the plugin, never the path: that is what a session records
    expect(findPreset(report.presets, 'notes').preset.plugins).toEqual([{ use: '@acme/notes' }])
  })

  it('refuses what cannot be used, each problem naming the file, the JSON path and the package', async () => {
    const p = await place()
    const file = await p.preset('project', [
      { use: '@acme/absent' },
      { use: '@acme/notes', config: { max: 0 } },
    ])
    await link(p.project, '@acme/notes', notes)
    const problems = problemsOf(await p.report())
    expect(problems).toEqual([
      expect.objectContaining({
        file,
        code: 'PRESET_PLUGIN_UNKNOWN',
        path: '$.plugins[0].use',
        line: 6,
        details: { plugin: '@acme/absent' },
        reason: `no installed plugin "@acme/absent": Keel does not ship it, and there is no package ${join(p.project, 'node_modules', '@acme/absent')} (or a parent directory's node_modules) or ${join(p.home, 'node_modules', '@acme/absent')}`,
      }),
      expect.objectContaining({
        file,
        code: 'PRESET_PLUGIN_CONFIG_INVALID',
        path: '$.plugins[1].config.max',
        details: { plugin: '@acme/notes' },
      }),
    ])
  })

  it('refuses a package that is no plugin: no default export, a function, another name, a failing import, unregistered events', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['export const plugin = {}\n', '', /has no default export/],
      ['export default () => ({})\n', '', /default export is a function/],
      [
        "export default { name: '@acme/bad', setup: 1 }\n",
        '',
        /is not a plugin definition: setup: must be a function/,
      ],
      [
        "export default { name: '@acme/other' }\n",
        '',
        /exports plugin '@acme\/other'; a plugin is named as its package/,
      ],
      ["throw new Error('boom at import')\n", '', /cannot import package @acme\/bad .*boom at import/],
      [
        "export default { name: '@acme/bad', events: ['acme-bad/x'] }\n",
        '',
        /registered no validator for it: its main module must import its generated module/,
      ],
    ]
    for (const [i, [source]] of cases.entries()) {
      const p = await place()
      const dir = await writePackage(
        join(p.root, `bad-${i}`),
        { name: '@acme/bad', version: '0.0.1' },
        source,
      )
      await link(p.project, '@acme/bad', dir)
      await p.preset('project', [{ use: '@acme/bad' }])
      const problems = problemsOf(await p.report())
      expect(problems).toEqual([
        expect.objectContaining({
          code: 'PRESET_PLUGIN_INVALID',
          path: '$.plugins[0].use',
          details: { plugin: '@acme/bad' },
        }),
      ])
      expect(problems[0]!.reason).toMatch(cases[i]![2])
    }
  })

  it('names a second copy of @keel/session that the package registered its events with', async () => {
    const p = await place()
    const session = join(p.root, 'other-session')
    const real = fileURLToPath(new URL('../../../core/session', import.meta.url))
    await cp(join(real, 'src'), join(session, 'src'), { recursive: true })
    await cp(join(real, 'package.json'), join(session, 'package.json'))
    await link(session, 'zod', join(real, 'node_modules', 'zod'))
    await link(session, '@keel/base', join(real, 'node_modules', '@keel', 'base'))
    await link(session, '@keel/llm', join(real, 'node_modules', '@keel', 'llm'))
    const dir = await writePackage(
      join(p.root, 'twin'),
      { name: '@acme/twin', version: '0.0.1' },
      pluginSource('@acme/twin', 'acme-twin/added', 'twin_add'),
      { session },
    )
    await link(p.project, '@acme/twin', dir)
    await p.preset('project', [{ use: '@acme/twin' }])
    const [problem] = problemsOf(await p.report())
    expect(problem).toMatchObject({ code: 'PRESET_PLUGIN_INVALID', path: '$.plugins[0].use' })
    expect(problem!.reason).toContain(`registered it with another copy of @keel/session (${session})`)
  })
})

describe('an agent with a plugin package', () => {
  it('runs its tool, records it, and rebuilds it on resume — by package name, or says why not', async () => {
    const p = await place()
    await link(p.project, '@acme/notes', notes)
    await p.preset('project', [{ use: '@acme/notes' }])
    const report = await p.report()
    const server = await startScriptedServer({
      script: [{ toolCalls: [{ name: 'note_add', arguments: { text: 'milk' } }] }, { text: 'noted' }],
    })
    const store = new JsonlStore({ home: p.home })
    const llm = createDeepSeekAdapter({ baseURL: server.baseURL, env: {} })
    try {
      const packages = { projectDir: p.project, keelHome: p.home }
      const { agent, composition } = await createPresetAgent({
        llm,
        cwd: p.project,
        store,
        preset: 'notes',
        presets: report.presets,
        catalog: report.catalog,
      })
      expect(composition.plugins).toEqual([
        expect.objectContaining({ name: '@acme/notes', version: '1.2.3' }),
      ])
      expect((await agent.send('note milk')).reason).toBe('completed')
      const id = agent.session.id
      await agent.close()
      const session = await store.load(id)
      expect(session.events.find((e) => e.type === ('acme-notes/added' as never))?.data).toEqual({
        text: 'milk',
      })

      // resumed with the shipped catalog only: found again by its package name
      const resumed = await createPresetAgent({
        llm,
        cwd: p.project,
        session: await store.open(id),
        packages,
      })
      expect(resumed.origin).toBe('rebuilt')
      expect(resumed.agent.tools.map((t) => t.name)).toContain('note_add')
      await resumed.agent.close()

      // gone: refused by name, saying where it was looked for
      const gone = await createPresetAgent({
        llm,
        cwd: p.project,
        session: await store.open(id),
        packages: { projectDir: join(p.root, 'elsewhere') },
      }).catch((error: unknown) => error)
      expect(gone).toMatchObject({ code: 'COMPOSITION_UNAVAILABLE' })
      expect((gone as Error).message).toContain(
        'plugin @acme/notes 1.2.3 is not installed (no installed plugin "@acme/notes"',
      )
    } finally {
      await store.close()
      await server.close()
    }
  })
})
