import { execFileSync } from 'node:child_process'
import { symlinkSync } from 'node:fs'
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  builtinPlugins,
  codingPreset,
  definePreset,
  formatPresetProblem,
  loadPresetReport,
  loadPresets,
  PresetError,
  parseLocatedJson,
  resolveComposition,
  shippedPresets,
} from '../src/index.js'

async function dirs() {
  const root = await mkdtemp(join(tmpdir(), 'keel-presets-'))
  const home = join(root, 'home')
  const project = join(root, 'project')
  await mkdir(join(home, 'presets'), { recursive: true })
  await mkdir(join(project, '.keel', 'presets'), { recursive: true })
  return { home, project }
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

describe('shipped presets', () => {
  it('are minimal, coding, review and headless; coding holds every plugin Keel ships', () => {
    expect(shippedPresets.map((p) => p.id)).toEqual(['minimal', 'coding', 'review', 'headless'])
    expect(codingPreset.plugins.map((p) => p.use).sort()).toEqual(
      builtinPlugins()
        .map((p) => p.use)
        .sort(),
    )
    expect(codingPreset.tools).toEqual(['fs', 'shell'])
  })

  it('resolve to compositions with versions, configs and digests', () => {
    const composition = resolveComposition(codingPreset)
    expect(composition.preset).toBe('coding')
    const approval = composition.plugins.find((p) => p.name === '@keel/user-approval')!
    expect(approval.version).toBe('0.1.0')
    expect(approval.config).toEqual({ approvalPolicy: 'on_request', sandboxMode: 'workspace_write' })
    expect(approval.configDigest).toMatch(/^sha256:[0-9a-f]{64}$/)
    const todo = composition.plugins.find((p) => p.name === '@keel/todo')!
    expect(todo.config).toBeUndefined()
    expect(todo.configDigest).not.toBe(approval.configDigest)
    for (const preset of shippedPresets) expect(() => resolveComposition(preset)).not.toThrow()
  })

  it('definePreset refuses a bad shape with the JSON path', () => {
    expect(() => definePreset({ id: 'x', description: 'd', tools: ['fs', 'net' as 'fs'] })).toThrow(
      /\$\.tools\[1\]/,
    )
  })
})

describe('user presets', () => {
  it('loads $KEEL_HOME/presets and <project>/.keel/presets after the shipped ones', async () => {
    const { home, project } = await dirs()
    await writeFile(
      join(home, 'presets', 'mine.json'),
      JSON.stringify({
        id: 'mine',
        description: 'todo with a short reminder',
        plugins: [{ use: '@keel/todo', config: { reminderAfterSteps: 2 } }],
        tools: ['fs-read'],
      }),
    )
    await writeFile(
      join(project, '.keel', 'presets', 'team.json'),
      JSON.stringify({ id: 'team', description: 'team preset', tools: ['fs'] }),
    )
    const presets = await loadPresets({ keelHome: home, projectDir: project })
    expect(presets.map((p) => p.preset.id)).toEqual([
      'minimal',
      'coding',
      'review',
      'headless',
      'mine',
      'team',
    ])
    expect(presets.find((p) => p.preset.id === 'mine')!.source).toBe(join(home, 'presets', 'mine.json'))
  })

  it('an unknown plugin names the file and $.plugins[i].use', async () => {
    const { home } = await dirs()
    const file = join(home, 'presets', 'bad.json')
    await writeFile(
      file,
      JSON.stringify({
        id: 'bad',
        description: 'x',
        plugins: [{ use: '@keel/todo' }, { use: '@keel/nope' }],
      }),
    )
    const error = await failure(loadPresets({ keelHome: home }))
    expect(error.code).toBe('PRESET_PLUGIN_UNKNOWN')
    expect(error.details).toMatchObject({ file, path: '$.plugins[1].use' })
    expect(error.message).toContain(file)
    expect(error.message).toContain('@keel/nope')
  })

  it('a bad plugin config names the file and the path inside the config', async () => {
    const { project } = await dirs()
    const file = join(project, '.keel', 'presets', 'bad.json')
    await writeFile(
      file,
      JSON.stringify({
        id: 'bad',
        description: 'x',
        plugins: [{ use: '@keel/todo', config: { maxInProgress: 0 } }],
      }),
    )
    const error = await failure(loadPresets({ projectDir: project }))
    expect(error.code).toBe('PRESET_PLUGIN_CONFIG_INVALID')
    expect(error.details).toMatchObject({
      file,
      path: '$.plugins[0].config.maxInProgress',
      plugin: '@keel/todo',
    })
  })

  it('a bad shape, bad JSON and a policy without the approval plugin are PRESET_INVALID with paths', async () => {
    const { home } = await dirs()
    const file = join(home, 'presets', 'a.json')
    await writeFile(file, JSON.stringify({ id: 'a', description: 'x', tools: ['fs'], extra: 1 }))
    expect((await failure(loadPresets({ keelHome: home }))).details).toMatchObject({ file, path: '$' })
    await writeFile(file, '{"id": "a",')
    const json = await failure(loadPresets({ keelHome: home }))
    expect(json.code).toBe('PRESET_INVALID')
    expect(json.message).toContain('not valid JSON')
    await writeFile(file, JSON.stringify({ id: 'a', description: 'x', policy: { sandboxMode: 'read_only' } }))
    expect((await failure(loadPresets({ keelHome: home }))).details).toMatchObject({ file, path: '$.policy' })
    await writeFile(file, JSON.stringify({ id: 'a', description: 'x', policy: { sandboxMode: 'wide_open' } }))
    expect((await failure(loadPresets({ keelHome: home }))).details).toMatchObject({
      file,
      path: '$.policy.sandboxMode',
    })
  })

  it('a duplicate id names both places, including a shipped id', async () => {
    const { home, project } = await dirs()
    await writeFile(join(home, 'presets', 'x.json'), JSON.stringify({ id: 'same', description: 'x' }))
    await writeFile(
      join(project, '.keel', 'presets', 'y.json'),
      JSON.stringify({ id: 'same', description: 'y' }),
    )
    const error = await failure(loadPresets({ keelHome: home, projectDir: project }))
    expect(error.code).toBe('PRESET_DUPLICATE')
    expect(error.details).toMatchObject({
      file: join(project, '.keel', 'presets', 'y.json'),
      other: join(home, 'presets', 'x.json'),
      path: '$.id',
    })
    await writeFile(
      join(project, '.keel', 'presets', 'y.json'),
      JSON.stringify({ id: 'coding', description: 'y' }),
    )
    const shipped = await failure(loadPresets({ keelHome: home, projectDir: project }))
    expect(shipped.code).toBe('PRESET_DUPLICATE')
    expect(shipped.message).toContain('shipped')
  })
})

describe('broken preset files', () => {
  it('every problem of every file at once, with line:column; a broken file leaves out only itself', async () => {
    const { home, project } = await dirs()
    const good = join(home, 'presets', 'good.json')
    await writeFile(good, JSON.stringify({ id: 'good', description: 'fine', tools: ['fs-read'] }))
    const shape = join(home, 'presets', 'shape.json')
    await writeFile(
      shape,
      ['{', '  "id": "shape",', '  "tools": ["fs", "net"],', '  "extra": 1', '}', ''].join('\n'),
    )
    const config = join(project, '.keel', 'presets', 'config.json')
    await writeFile(
      config,
      [
        '{',
        '  "id": "config",',
        '  "description": "two bad plugins",',
        '  "plugins": [',
        '    { "use": "@keel/todo", "config": { "maxInProgress": 0, "reminderAfterSteps": -1 } },',
        '    { "use": "@keel/nope" }',
        '  ]',
        '}',
      ].join('\n'),
    )
    const syntax = join(project, '.keel', 'presets', 'syntax.json')
    await writeFile(syntax, '{\n  "id": "syntax",\n  "description": "x"\n  "tools": []\n}\n')
    const report = await loadPresetReport({ keelHome: home, projectDir: project })
    expect(report.presets.map((p) => p.preset.id)).toContain('good')
    expect(report.presets.map((p) => p.preset.id)).not.toContain('config')
    const lines = report.broken.flatMap((b) => b.problems.map((p) => formatPresetProblem(b.file, p)))
    const expected = [
      [`${shape}:1:1: $.description: `, ''],
      [`${shape}:3:19: $.tools[1]: `, ''],
      [`${shape}:4:3: $: `, 'extra'],
      [`${config}:5:57: $.plugins[0].config.maxInProgress: `, 'config of @keel/todo'],
      [`${config}:5:82: $.plugins[0].config.reminderAfterSteps: `, 'config of @keel/todo'],
      [`${config}:6:14: $.plugins[1].use: `, 'no installed plugin "@keel/nope"'],
      [`${syntax}:4:3: $: `, "not valid JSON: expected ',' or '}'"],
    ]
    expect(lines).toHaveLength(expected.length)
    lines.forEach((line, i) => {
      expect(line.startsWith(expected[i]![0]!), `${line}\n  should start with ${expected[i]![0]}`).toBe(true)
      expect(line).toContain(expected[i]![1])
    })
    expect(report.broken.map((b) => b.id)).toEqual(['shape', 'config', undefined])
    // strictly, one error lists them all
    const strict = await failure(loadPresets({ keelHome: home, projectDir: project }))
    expect(strict.details.problems).toEqual(lines)
  })

  it('parseLocatedJson agrees with JSON.parse and places values and keys', () => {
    const text = '{\n  "a": [1, {"b": "x\\n"}],\n  "c": null\n}'
    const located = parseLocatedJson(text)
    if (!located.ok) throw new Error(located.message)
    expect(located.value).toEqual(JSON.parse(text))
    expect(located.at(['a', 1, 'b'])).toEqual({ line: 2, column: 18 })
    expect(located.at(['a', 1, 'missing'])).toEqual({ line: 2, column: 12 })
    expect(located.keyAt([], 'c')).toEqual({ line: 3, column: 3 })
    for (const bad of ['', '{', '[1,]', '{"a" 1}', '01', '"\\u12"', '{"a":1} x', 'tru']) {
      const result = parseLocatedJson(bad)
      expect(result.ok, bad).toBe(false)
      expect(() => JSON.parse(bad), bad).toThrow()
    }
  })
})

describe('a preset file that is not a regular file (a cloned repository can hold a symbolic link)', () => {
  it('a project preset linked to /dev/zero, or a FIFO, breaks only itself, never read', async () => {
    const root = await mkdtemp(join(tmpdir(), 'keel-presets-'))
    const project = join(root, 'project')
    await mkdir(join(project, '.keel', 'presets'), { recursive: true })
    const zero = join(project, '.keel', 'presets', 'zero.json')
    const fifo = join(project, '.keel', 'presets', 'fifo.json')
    symlinkSync('/dev/zero', zero)
    execFileSync('mkfifo', [fifo])
    const report = await loadPresetReport({ keelHome: join(root, 'home'), projectDir: project })
    const problems = new Map(
      report.broken.map((b) => [b.file, b.problems.map((p) => `${p.code}: ${p.reason}`)]),
    )
    expect(problems.get(zero)).toEqual([
      'PRESET_UNREADABLE: cannot read the file: it is a character device, not a regular file',
    ])
    expect(problems.get(fifo)).toEqual([
      'PRESET_UNREADABLE: cannot read the file: it is a FIFO, not a regular file',
    ])
    expect(report.presets.length).toBeGreaterThan(0) // the shipped ones still load
  })
})
