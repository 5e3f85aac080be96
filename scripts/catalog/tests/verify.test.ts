// verify on temp copies of the fixture project (never the real repository): byte-for-byte
// comparison, semantic diffs in words, change records, version bumps and migrations.
import { spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import { cpSync, readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { CATALOG_EN, CATALOG_I18N, CATALOG_JSON, CATALOG_ZH, generateCatalog } from '../generate.js'
import { PLACEHOLDER_NOTE, readRecords } from '../records.js'
import { generateAndWrite } from '../release.js'
import { verifyCatalog } from '../verify.js'
import { cleanRepos, edit, eventsSource, makeRepo, write } from './helpers.js'

afterAll(cleanRepos)
// Each verify and snapshot loads the golden logs in a child process: slow on a loaded machine.
vi.setConfig({ testTimeout: 120_000 })

const CORE = 'packages/core/session/src/events.ts'
const TODO = 'packages/todo/todo/src/events.ts'
const read = (root: string, rel: string) => readFileSync(join(root, rel), 'utf8')

/** A fixture copy with its catalog generated and format v1 snapshotted. */
function fresh(): string {
  const root = makeRepo('mini')
  generateAndWrite({ root, snapshot: true })
  return root
}

describe('verify', () => {
  it('passes on a freshly generated repository and writes all outputs', () => {
    const root = fresh()
    const result = verifyCatalog({ root })
    expect(result.messages.join('\n')).toContain('persistence catalog up to date')
    expect(result.ok).toBe(true)
    const known = read(root, 'packages/core/session/src/known-event-types.generated.ts')
    // every generated module says so in its name (biome and the architecture test skip them)
    const modules = Object.keys(generateCatalog({ root }).files).filter((p) => p.endsWith('.ts'))
    expect(modules.length).toBeGreaterThan(1)
    for (const path of modules) expect(path).toMatch(/\.generated\.ts$/)
    expect(known).toContain("'todo/write': { surface: false, owner: '@keel/todo' },")
    expect(known).toContain("'user/message': { surface: true, owner: '@keel/session' },")
    const machine = JSON.parse(read(root, CATALOG_JSON))
    expect(machine.events['todo/write'].schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema')
    expect(machine.events['todo/write'].source).toBe(`${TODO}#SessionEventMap['todo/write']`)
    const { seal, previousSeal, golden, folded, ...snapshot } = JSON.parse(
      read(root, 'docs/persistence/formats/v1.json'),
    )
    expect(snapshot).toEqual(JSON.parse(read(root, CATALOG_JSON)))
    expect(previousSeal).toBeNull()
    expect(folded).toBeNull()
    expect(golden).toBe(
      createHash('sha256').update(read(root, 'docs/persistence/golden/v1/session.jsonl')).digest('hex'),
    )
    expect(seal).toMatch(/^[0-9a-f]{64}$/)
  })

  it('is deterministic: the same bytes on every run and from another directory', () => {
    const a = fresh()
    const b = makeRepo('mini')
    cpSync(join(a, 'docs'), join(b, 'docs'), { recursive: true })
    const first = generateCatalog({ root: a }).files
    const again = generateCatalog({ root: a }).files
    const elsewhere = generateCatalog({ root: b }).files
    expect(again).toEqual(first)
    expect(elsewhere).toEqual(first)
  })

  it('fails on a changed property type in a core event, naming the event and path, until regenerated and recorded', () => {
    const root = fresh()
    edit(root, CORE, (t) =>
      t
        .replace("'tool/call': { turn: number;", "'tool/call': { turn: string;")
        .replace('@example {"turn":1,"name"', '@example {"turn":"1","name"'),
    )
    let result = verifyCatalog({ root })
    expect(result.ok).toBe(false)
    expect(result.staleFiles).toEqual(
      expect.arrayContaining([CATALOG_EN, CATALOG_ZH, CATALOG_JSON, CATALOG_I18N]),
    )
    expect(result.semanticChanges).toContain('tool/call.data.turn: number → string  [breaking]')
    expect(result.messages.join('\n')).toContain('run `pnpm gen-persistence-catalog`')

    // Regenerated: the files match, but the change needs a record.
    generateAndWrite({ root })
    result = verifyCatalog({ root })
    expect(result.staleFiles).toEqual([])
    expect(result.ok).toBe(false)
    expect(result.historyProblems.join('\n')).toContain(
      'tool/call changed since format snapshot v1 (breaking: tool/call.data.turn: number → string) but has no change record docs/persistence/changes/v1/tool__call.json',
    )

    // Recorded: a breaking change still needs a version bump and a migration.
    generateAndWrite({ root, record: 'turn numbers became labels' })
    const [rec] = readRecords(root)
    expect(rec?.record).toMatchObject({
      event: 'tool/call',
      classification: 'breaking',
      note: 'turn numbers became labels',
    })
    result = verifyCatalog({ root })
    expect(result.ok).toBe(false)
    expect(result.historyProblems.join('\n')).toMatch(
      /breaking change to tool\/call: .*set SESSION_FORMAT_VERSION to 2/,
    )

    // Bumped without a migration.
    edit(root, 'packages/core/session/src/types.ts', (t) =>
      t.replace('SESSION_FORMAT_VERSION = 1', 'SESSION_FORMAT_VERSION = 2'),
    )
    generateAndWrite({ root })
    result = verifyCatalog({ root })
    expect(result.historyProblems.join('\n')).toContain('no migration from format 1 to 2 is registered')

    // Migration registered: only the new snapshot is missing.
    write(
      root,
      'packages/core/session/src/upgrade-v2.ts',
      "import { registerMigration } from './migrations.js'\n\nregisterMigration({\n  from: 1,\n  to: 2,\n  owner: '@keel/session',\n  description: 'turn numbers become labels',\n  migrate: (e) => (e.type === 'tool/call' ? { ...e, data: { ...(e.data as object), turn: String((e.data as { turn: number }).turn) } } : e),\n})\n",
    )
    // Not imported by anything yet: the code that runs registers no migration.
    generateAndWrite({ root })
    expect(verifyCatalog({ root }).historyProblems.join('\n')).toContain(
      'no migration from format 1 to 2 is registered',
    )
    edit(root, 'packages/core/session/src/index.ts', (t) => `import './upgrade-v2.js'\n${t}`)
    generateAndWrite({ root })
    result = verifyCatalog({ root })
    expect(result.historyProblems).toEqual([
      'SESSION_FORMAT_VERSION is 2 but there is no snapshot docs/persistence/formats/v2.json: once the change records and the migration are in place, run `pnpm gen-persistence-catalog --snapshot`',
    ])
    generateAndWrite({ root, snapshot: true })
    result = verifyCatalog({ root })
    expect(result.messages.at(-1)).toContain('up to date')
    expect(result.ok).toBe(true)
    const reference = read(root, 'docs/persistence/format-reference.md')
    expect(reference).toContain('## Format version 2')
    expect(reference).toContain('## Format version 1')
    expect(reference).toContain('- `tool/call` — **breaking**')
  })

  it('the CLI exits 1 and prints the change in words; 0 once regenerated and recorded', () => {
    const root = fresh()
    const cli = join(dirname(fileURLToPath(import.meta.url)), '..', 'cli.ts')
    const run = (...args: string[]) =>
      spawnSync(process.execPath, ['--import', 'tsx', cli, ...args, '--root', root], { encoding: 'utf8' })
    edit(root, TODO, (t) => t.replace('  text: string', '  text: number'))
    const failed = run('verify')
    expect(failed.status).toBe(1)
    expect(failed.stderr).toContain('todo/write.data.todos[].text: string → number  [breaking]')
    expect(run('generate', '--record', 'texts became numbers').status).toBe(0)
    edit(root, 'packages/core/session/src/types.ts', (t) =>
      t.replace('SESSION_FORMAT_VERSION = 1', 'SESSION_FORMAT_VERSION = 2'),
    )
    write(
      root,
      'packages/core/session/src/v2.ts',
      "import { registerMigration } from './migrations.js'\n\nregisterMigration({ from: 1, to: 2, owner: '@keel/todo', description: 'x' })\n",
    )
    edit(root, 'packages/core/session/src/index.ts', (t) => `import './v2.js'\n${t}`)
    expect(run('generate', '--snapshot').status).toBe(0)
    const passed = run('verify')
    expect(passed.stdout).toContain('up to date')
    expect(passed.status).toBe(0)
  }, 180_000)

  it('a JSDoc-only edit changes the docs but no digest', () => {
    const root = fresh()
    const before = read(root, CATALOG_JSON)
    edit(root, CORE, (t) =>
      t.replace('/** A turn began. @example', '/** A turn began: the agent took one message. @example'),
    )
    const result = verifyCatalog({ root })
    expect(result.ok).toBe(false)
    expect(result.staleFiles.sort()).toEqual([CATALOG_I18N, CATALOG_EN, CATALOG_ZH].sort())
    expect(result.semanticChanges).toEqual([])
    expect(result.messages.join('\n')).toContain('digests unchanged')
    expect(result.messages.join('\n')).toContain('+ /** A turn began: the agent took one message. @example')
    generateAndWrite({ root })
    expect(read(root, CATALOG_JSON)).toBe(before)
    expect(read(root, CATALOG_EN)).toContain('A turn began: the agent took one message.')
    expect(read(root, CATALOG_ZH)).toContain('A turn began: the agent took one message.')
    expect(verifyCatalog({ root }).ok).toBe(true)
  })

  it('a JSDoc edit that moves lines changes the rendered docs, not the machine catalog', () => {
    const root = fresh()
    const machine = read(root, CATALOG_JSON)
    edit(root, CORE, (t) =>
      t.replace(
        '/** A turn began. @example {"turn":1} */',
        '/**\n   * A turn began.\n   *\n   * Turn numbers increase by one.\n   * @example {"turn":1}\n   */',
      ),
    )
    const result = verifyCatalog({ root })
    expect(result.staleFiles).not.toContain(CATALOG_JSON)
    expect(result.semanticChanges).toEqual([])
    generateAndWrite({ root })
    const after = verifyCatalog({ root })
    expect(after.historyProblems).toEqual([])
    expect(after.ok).toBe(true)
    expect(read(root, CATALOG_JSON)).toBe(machine)
    expect(JSON.parse(machine).events['tool/call'].source).toBe(`${CORE}#SessionEventMap['tool/call']`)
  })

  it('an added optional property is additive and needs only a record', () => {
    const root = fresh()
    edit(root, TODO, (t) =>
      t.replace("'todo/write': { todos: TodoItem[] }", "'todo/write': { todos: TodoItem[]; note?: string }"),
    )
    const result = verifyCatalog({ root })
    expect(result.semanticChanges).toEqual(['todo/write: property added: note?  [additive]'])
    generateAndWrite({ root, record: 'a free-text note beside the list' })
    expect(verifyCatalog({ root }).ok).toBe(true)
    expect(read(root, 'docs/persistence/changes/v1/todo__write.json')).toContain(
      '"classification": "additive"',
    )
  })

  it('--record notes what changed now: a record already as the code says keeps its note', () => {
    const root = fresh()
    edit(root, TODO, (t) =>
      t.replace("'todo/write': { todos: TodoItem[] }", "'todo/write': { todos: TodoItem[]; note?: string }"),
    )
    generateAndWrite({ root, record: 'a free-text note beside the list' })
    edit(root, CORE, (t) =>
      t.replace("'turn/start': { turn: number }", "'turn/start': { turn: number; why?: string }"),
    )
    generateAndWrite({ root, record: 'why a turn began' })
    const notes = Object.fromEntries(readRecords(root).map((r) => [r.record?.event, r.record?.note]))
    expect(notes).toEqual({
      'todo/write': 'a free-text note beside the list',
      'turn/start': 'why a turn began',
    })
    // the same event changed again: its note gains the new reason
    edit(root, TODO, (t) => t.replace('note?: string }', 'note?: string; pinned?: boolean }'))
    generateAndWrite({ root, record: 'pinned lists' })
    expect(readRecords(root).find((r) => r.record?.event === 'todo/write')?.record?.note).toBe(
      'a free-text note beside the list Later: pinned lists',
    )
    expect(verifyCatalog({ root }).ok).toBe(true)
  })

  it('a new union member and required → optional are widening; a new required property is breaking', () => {
    const root = fresh()
    edit(root, TODO, (t) =>
      t
        .replace("'pending' | 'in_progress' | 'done'", "'pending' | 'in_progress' | 'done' | 'blocked'")
        .replace('  text: string', '  text?: string'),
    )
    edit(root, CORE, (t) =>
      t
        .replace("'turn/start': { turn: number }", "'turn/start': { turn: number; reason: string }")
        .replace('A turn began. @example {"turn":1}', 'A turn began. @example {"turn":1,"reason":"asked"}'),
    )
    const changes = verifyCatalog({ root }).semanticChanges
    expect(changes).toContain('todo/write.data.todos[].status: union member added: "blocked"  [widening]')
    expect(changes).toContain('todo/write.data.todos[].text: required → optional  [widening]')
    expect(changes).toContain('turn/start: required property added: reason  [breaking]')
    generateAndWrite({ root, record: 'blocked todos' })
    const records = readRecords(root).map((r) => [r.record?.event, r.record?.classification])
    expect(records).toEqual([
      ['todo/write', 'widening'],
      ['turn/start', 'breaking'],
    ])
  })

  it('a literal widened to its base type is widening; a new event is additive; a removed one breaking', () => {
    const root = fresh()
    write(
      root,
      'packages/todo/todo/src/more.ts',
      eventsSource([['todo/clear', "{ reason: 'user' }", { reason: 'user' }]]),
    )
    generateAndWrite({ root, record: 'clear event' })
    generateAndWrite({ root, snapshot: true, force: true })
    expect(verifyCatalog({ root }).ok).toBe(true)
    edit(root, 'packages/todo/todo/src/more.ts', (t) => t.replace("reason: 'user'", 'reason: string'))
    expect(verifyCatalog({ root }).semanticChanges).toEqual([
      'todo/clear.data.reason: "user" → string  [widening]',
    ])
    edit(root, TODO, (t) =>
      t.replace(/\/\*\* Whole-list[^\n]*\n\s*'todo\/write': \{ todos: TodoItem\[\] \}\n/, ''),
    )
    const changes = verifyCatalog({ root }).semanticChanges
    expect(changes).toContain('todo/write: event type removed  [breaking]')
  })

  it('changes inside members of a discriminated union are described inside the members', () => {
    const root = makeRepo('mini')
    const OPS = 'packages/todo/todo/src/ops.ts'
    write(
      root,
      OPS,
      eventsSource([
        [
          'todo/op',
          "{ op: 'add'; text: string } | { op: 'remove'; id: string } | { op: 'clear' }",
          { op: 'add', text: 'milk' },
        ],
      ]),
    )
    generateAndWrite({ root, snapshot: true })
    edit(root, OPS, (t) =>
      t.replace("{ op: 'add'; text: string }", "{ op: 'add'; text: string; note?: string }"),
    )
    edit(root, OPS, (t) =>
      t.replace("{ op: 'remove'; id: string }", "{ op: 'remove'; id: string; why?: string }"),
    )
    expect(verifyCatalog({ root }).semanticChanges).toEqual([
      'todo/op: property added: note?  [additive]',
      'todo/op: property added: why?  [additive]',
    ])
    edit(root, OPS, (t) => t.replace(" | { op: 'clear' }", ''))
    expect(verifyCatalog({ root }).semanticChanges).toContain(
      'todo/op: union member removed: { op: "clear" }  [breaking]',
    )
  })

  it('a record that disagrees with the code, a stale record and a placeholder note each fail with what to do', () => {
    const root = fresh()
    // Committed at the snapshot: the states below are never committed, so none is kept.
    const git = (...args: string[]) =>
      expect(
        spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: root }).status,
      ).toBe(0)
    git('init', '-q')
    git('add', '-A')
    git('commit', '-qm', 'snapshot v1')
    edit(root, TODO, (t) =>
      t.replace("'todo/write': { todos: TodoItem[] }", "'todo/write': { todos: TodoItem[]; note?: string }"),
    )
    generateAndWrite({ root, record: '' })
    let problems = verifyCatalog({ root }).historyProblems.join('\n')
    expect(problems).toContain('docs/persistence/changes/v1/todo__write.json has no note')
    expect(read(root, 'docs/persistence/changes/v1/todo__write.json')).toContain(PLACEHOLDER_NOTE)

    edit(root, 'docs/persistence/changes/v1/todo__write.json', (t) =>
      t.replace('"classification": "additive"', '"classification": "widening"'),
    )
    problems = verifyCatalog({ root }).historyProblems.join('\n')
    expect(problems).toContain('todo__write.json disagrees with the code')
    expect(problems).toContain('a classification is computed, never chosen')

    edit(root, TODO, (t) => t.replace('; note?: string }', ' }'))
    generateAndWrite({ root })
    problems = verifyCatalog({ root }).historyProblems.join('\n')
    expect(problems).toContain('todo__write.json records a change that is not in the code')
  })

  it('a hand edit of one language file is detected through the pairing record', () => {
    const root = fresh()
    edit(root, CATALOG_ZH, (t) => t.replace('已解析的持久化类型', '已解析类型'))
    const result = verifyCatalog({ root })
    expect(result.staleFiles).toEqual([CATALOG_ZH])
    expect(result.messages.join('\n')).toContain('edited by hand')
  })

  it('refuses to rewrite an existing, different snapshot without --force', () => {
    const root = fresh()
    edit(root, TODO, (t) =>
      t.replace("'todo/write': { todos: TodoItem[] }", "'todo/write': { todos: TodoItem[]; n?: number }"),
    )
    expect(() => generateAndWrite({ root, snapshot: true })).toThrow(/already exists and differs/)
  })
})
