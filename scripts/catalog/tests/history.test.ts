// Holes in the format history (issue 19) and the release path, on temp copies of the fixture
// project: each case let a change to what is on disk pass verify with the earlier generator.
import { spawnSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { stableJson } from '../catalog-json.js'
import { sha256 } from '../digest.js'
import { generateCatalog } from '../generate.js'
import { CHANGES_DIR } from '../records.js'
import { generateAndWrite } from '../release.js'
import { readSnapshots, sealedSnapshot } from '../snapshots.js'
import { sourceOf } from '../translations.js'
import { verifyCatalog } from '../verify.js'
import { cleanRepos, edit, eventsSource, makeRepo, write } from './helpers.js'

afterAll(cleanRepos)
// Each verify and snapshot loads the golden logs in a child process: slow on a loaded machine.
vi.setConfig({ testTimeout: 120_000 })

const CORE = 'packages/core/session/src/events.ts'
const TODO = 'packages/todo/todo/src/events.ts'
const TYPES = 'packages/core/session/src/types.ts'
const V1 = 'docs/persistence/formats/v1.json'
const V2 = 'docs/persistence/formats/v2.json'
const GOLDEN_V1 = 'docs/persistence/golden/v1/session.jsonl'
const cli = join(dirname(fileURLToPath(import.meta.url)), '..', 'cli.ts')
const read = (root: string, rel: string) => readFileSync(join(root, rel), 'utf8')
const history = (root: string) => verifyCatalog({ root }).historyProblems.join('\n')

/** A fixture copy with format v1 snapshotted. */
function fresh(): string {
  const root = makeRepo('mini')
  generateAndWrite({ root, snapshot: true })
  return root
}

/** tool/call.turn becomes a string (a breaking change), recorded. */
function breakToolCallTurn(root: string): void {
  edit(root, CORE, (t) =>
    t
      .replace("'tool/call': { turn: number;", "'tool/call': { turn: string;")
      .replace('@example {"turn":1,"name"', '@example {"turn":"1","name"'),
  )
  generateAndWrite({ root, record: 'turn numbers became labels' })
}

/** SESSION_FORMAT_VERSION 2 and `owner`'s migration `migrate` (JS source) in a module its index imports. */
function bumpWithMigration(
  root: string,
  pkg: string,
  owner: string,
  migrate: string,
  file = 'upgrade-v2',
): void {
  if (!read(root, TYPES).includes('SESSION_FORMAT_VERSION = 2'))
    edit(root, TYPES, (t) => t.replace('SESSION_FORMAT_VERSION = 1', 'SESSION_FORMAT_VERSION = 2'))
  write(
    root,
    `${pkg}/src/${file}.ts`,
    `import { registerMigration } from '${pkg === 'packages/core/session' ? './migrations.js' : '@keel/session'}'\n\nregisterMigration({ from: 1, to: 2, owner: '${owner}', description: 'v2', migrate: ${migrate} })\n`,
  )
  edit(root, `${pkg}/src/index.ts`, (t) => `import './${file}.js'\n${t}`)
}

const TURN_TO_STRING =
  "(e) => (e.type === 'tool/call' ? { ...e, data: { ...e.data, turn: String(e.data.turn) } } : e)"

describe('4. a deleted snapshot is restored, never rebuilt', () => {
  it('gen --snapshot refuses (with or without --force), keeps the change records, and verify names the deletion', () => {
    const root = fresh()
    breakToolCallTurn(root)
    const records = readdirSync(join(root, CHANGES_DIR, 'v1'))
    expect(records).toEqual(['tool__call.json'])
    rmSync(join(root, V1))
    for (const force of [false, true]) {
      expect(() => generateAndWrite({ root, snapshot: true, force })).toThrow(
        /v1\.json is missing but docs\/persistence\/golden\/v1\/session\.jsonl and docs\/persistence\/changes\/v1 exist: a snapshot of format 1 was released and deleted/,
      )
    }
    expect(readdirSync(join(root, CHANGES_DIR, 'v1'))).toEqual(records)
    expect(existsSync(join(root, V1))).toBe(false)
    expect(history(root)).toContain(
      `${GOLDEN_V1} exists but ${V1} does not: a released format snapshot was deleted`,
    )
  })

  it('a gap in the snapshots fails verify', () => {
    const root = fresh()
    breakToolCallTurn(root)
    bumpWithMigration(root, 'packages/core/session', '@keel/session', TURN_TO_STRING)
    generateAndWrite({ root, snapshot: true })
    expect(verifyCatalog({ root }).ok).toBe(true)
    rmSync(join(root, V1))
    rmSync(join(root, 'docs/persistence/golden/v1'), { recursive: true })
    rmSync(join(root, CHANGES_DIR), { recursive: true })
    expect(history(root)).toContain(`${V2}: format snapshots go 1, 2, 3, …; ${V1} is missing`)
  }, 60_000)
})

describe('5. seals are chained to the previous snapshot, the golden log and the folded records', () => {
  it('the latest snapshot edited and re-sealed from the file alone fails verify', () => {
    const root = fresh()
    breakToolCallTurn(root)
    // Absorb the breaking change into v1 and re-seal it as the earlier generator did.
    const catalog = generateCatalog({ root }).catalog
    write(
      root,
      V1,
      stableJson({
        ...catalog,
        previousSeal: null,
        seal: sha256(stableJson({ catalog, previousSeal: null })),
      }),
    )
    expect(history(root)).toContain(`${V1} does not match its seal`)
  })

  it('a latest v2 edited and re-sealed with the current seal fails: the records folded into it disagree', () => {
    const root = fresh()
    breakToolCallTurn(root)
    bumpWithMigration(root, 'packages/core/session', '@keel/session', TURN_TO_STRING)
    generateAndWrite({ root, snapshot: true })
    expect(verifyCatalog({ root }).ok).toBe(true)
    // A later compatible-looking edit (turn/start gains a required property), absorbed into v2.
    edit(root, CORE, (t) =>
      t
        .replace("'turn/start': { turn: number }", "'turn/start': { turn: number; label: string }")
        .replace('A turn began. @example {"turn":1}', 'A turn began. @example {"turn":1,"label":"a"}'),
    )
    generateAndWrite({ root })
    const [, v2] = readSnapshots(root)
    const forged = generateCatalog({ root }).catalog
    write(
      root,
      V2,
      sealedSnapshot(forged, { previousSeal: v2!.previousSeal!, golden: v2!.golden!, folded: v2!.folded! }),
    )
    expect(history(root)).toContain(
      `turn/start changed since format snapshot v1 (breaking: turn/start: required property added: label) but has no change record ${CHANGES_DIR}/v1/turn__start.json`,
    )
    // A record folded into v2 edited afterwards breaks v2's seal of them.
    write(
      root,
      V2,
      sealedSnapshot(v2!.catalog, {
        previousSeal: v2!.previousSeal!,
        golden: v2!.golden!,
        folded: v2!.folded!,
      }),
    )
    edit(root, `${CHANGES_DIR}/v1/tool__call.json`, (t) =>
      t.replace('turn numbers became labels', 'edited later'),
    )
    expect(history(root)).toContain(
      `the change records in ${CHANGES_DIR}/v1/ differ from those sealed into ${V2}`,
    )
  }, 60_000)
})

describe('6. golden logs are checked and loaded by verify', () => {
  it('an edited value in a golden log fails verify', () => {
    const root = fresh()
    edit(root, GOLDEN_V1, (t) => t.replace('"name":"ls"', '"name":"rm"'))
    expect(history(root)).toContain(`${GOLDEN_V1} differs from the golden log sealed into ${V1}`)
  })

  it('an identity migration that leaves old-shaped data is refused by --snapshot and fails verify', () => {
    const root = fresh()
    breakToolCallTurn(root)
    bumpWithMigration(root, 'packages/core/session', '@keel/session', '(e) => e')
    expect(() => generateAndWrite({ root, snapshot: true })).toThrow(
      /golden\/v1\/session\.jsonl, upgraded from format 1 to 2, does not load with today's types: EVENT_DATA_INVALID/,
    )
    expect(existsSync(join(root, V2))).toBe(false)
    expect(history(root)).toMatch(
      /golden\/v1\/session\.jsonl, upgraded from format 1 to 2, does not load with today's types/,
    )
    bumpWithMigration(root, 'packages/core/session', '@keel/session', TURN_TO_STRING)
    generateAndWrite({ root, snapshot: true })
    const result = verifyCatalog({ root })
    expect(result.historyProblems).toEqual([])
    expect(result.ok).toBe(true)
  }, 60_000)
})

describe('9. every change is classified against the committed catalog too', () => {
  it('renaming a committed event that no snapshot has yet is breaking', () => {
    const root = fresh()
    const NOTES = 'packages/todo/todo/src/notes.ts'
    write(root, NOTES, eventsSource([['todo/added', '{ text: string }', { text: 'milk' }]]))
    generateAndWrite({ root, record: 'notes on the list' })
    expect(verifyCatalog({ root }).ok).toBe(true)
    // The rename, regenerated and recorded as the tool says; a record it calls stale is deleted.
    write(root, NOTES, eventsSource([['todo/created', '{ text: string }', { text: 'milk' }]]))
    generateAndWrite({ root })
    generateAndWrite({ root, record: 'renamed to todo/created' })
    for (const line of verifyCatalog({ root }).historyProblems) {
      const stale = /^(\S+\.json) records a change that is no/.exec(line)
      if (stale) rmSync(join(root, stale[1]!))
    }
    const result = verifyCatalog({ root })
    expect(result.ok).toBe(false)
    expect(result.historyProblems.join('\n')).toContain('breaking change to todo/added')
    const record = JSON.parse(read(root, `${CHANGES_DIR}/v1/todo__added.json`))
    expect(record).toMatchObject({ from: null, to: null, classification: 'breaking' })
    expect(record.superseded).toEqual([
      {
        to: expect.stringMatching(/^[0-9a-f]{64}$/),
        classification: 'breaking',
        changes: ['todo/added: event type removed'],
      },
    ])
    // Nor can --force fold the rename into v1: the committed state would be lost.
    expect(() => generateAndWrite({ root, snapshot: true, force: true })).toThrow(
      'cannot absorb a breaking change (todo/added: a committed state kept in its change record)',
    )
  })

  it('a committed optional property whose type then changes is breaking, though still "additive" against the snapshot', () => {
    const root = fresh()
    edit(root, TODO, (t) => t.replace('  text: string\n', '  text: string\n  due?: string\n'))
    generateAndWrite({ root, record: 'todos may carry a due date' })
    edit(root, TODO, (t) => t.replace('  due?: string\n', '  due?: number\n'))
    const { lines } = generateAndWrite({ root, record: 'due dates are epoch milliseconds' })
    expect(lines.join('\n')).toContain('kept a committed state of todo/write')
    const problems = history(root)
    expect(problems).toContain('breaking change to todo/write')
  })
})

describe('the release path', () => {
  it('each owner registers its own upgrade of the same step; verify loads the golden log through both', () => {
    const root = fresh()
    breakToolCallTurn(root)
    edit(root, TODO, (t) =>
      t
        .replace("'todo/write': { todos: TodoItem[] }", "'todo/write': { todos: TodoItem[]; owner: string }")
        .replace('@example {"todos":[]}', '@example {"todos":[],"owner":"me"}'),
    )
    generateAndWrite({ root, record: 'todo lists have an owner' })
    bumpWithMigration(root, 'packages/core/session', '@keel/session', TURN_TO_STRING)
    // todo's upgrade missing: the golden log's todo/write does not load.
    expect(() => generateAndWrite({ root, snapshot: true })).toThrow(
      /golden\/v1\/session\.jsonl, upgraded from format 1 to 2, does not load with today's types: EVENT_DATA_INVALID: todo\/write/,
    )
    bumpWithMigration(
      root,
      'packages/todo/todo',
      '@keel/todo',
      "(e) => (e.type === 'todo/write' ? { ...e, data: { ...e.data, owner: 'nobody' } } : e)",
    )
    generateAndWrite({ root, snapshot: true })
    expect(verifyCatalog({ root }).ok).toBe(true)
  }, 90_000)

  it('--dry-run lists what would change and writes nothing', () => {
    const root = fresh()
    expect(generateAndWrite({ root, dryRun: true }).lines.at(-1)).toContain('(no file would change)')
    edit(root, TODO, (t) => t.replace('  text: string\n', '  text: string\n  due?: string\n'))
    const before = read(root, 'docs/persistence-catalog.json')
    const { lines } = generateAndWrite({ root, dryRun: true, record: 'due dates' })
    expect(lines).toContain(`would draft ${CHANGES_DIR}/v1/todo__write.json`)
    expect(lines).toContain('would write docs/persistence-catalog.json')
    expect(read(root, 'docs/persistence-catalog.json')).toBe(before)
    expect(existsSync(join(root, CHANGES_DIR))).toBe(false)
  })

  it('gen --translation-hash prints the hash a translation must carry', () => {
    const root = fresh()
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', cli, 'generate', '--translation-hash', 'todo/write', '--root', root],
      {
        encoding: 'utf8',
      },
    )
    expect(run.status, run.stderr).toBe(0)
    expect(run.stdout.trim()).toBe(sourceOf(generateCatalog({ root }).model, 'event:todo/write'))
    const unknown = spawnSync(
      process.execPath,
      ['--import', 'tsx', cli, 'generate', '--translation-hash', 'todo/nope', '--root', root],
      {
        encoding: 'utf8',
      },
    )
    expect(unknown.status).toBe(1)
    expect(unknown.stderr).toContain(
      'no documented event or type "todo/nope" in the catalog; did you mean todo/write',
    )
  }, 60_000)
})
