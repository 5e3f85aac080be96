// "The generator cannot be fooled": each case was reproduced against the earlier generator,
// which exited 0 (or mislabelled the change); each must now be refused or reported.
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { generateCatalog } from '../generate.js'
import { recordPath } from '../records.js'
import { generateAndWrite } from '../release.js'
import { verifyCatalog } from '../verify.js'
import { cleanRepos, edit, eventsSource, makeRepo, problemsOf, write } from './helpers.js'

afterAll(cleanRepos)
// Each verify and snapshot loads the golden logs in a child process: slow on a loaded machine.
vi.setConfig({ testTimeout: 120_000 })

const TODO = 'packages/todo/todo/src/events.ts'
const cli = join(dirname(fileURLToPath(import.meta.url)), '..', 'cli.ts')

describe('compiler errors stop gen and verify', () => {
  it('a stray backtick in a file that declares events: refused with the diagnostics, exit 1', () => {
    const root = makeRepo('mini')
    generateAndWrite({ root, snapshot: true })
    edit(root, TODO, (t) =>
      t.replace(
        '/** Whole-list snapshot; the latest write wins on replay. @example',
        '`/** Whole-list snapshot; the latest write wins on replay. @example',
      ),
    )
    expect(problemsOf(root)).toMatch(/packages\/todo\/todo\/src\/events\.ts:\d+:\d+: TS\d+: /)
    for (const command of ['generate', 'verify']) {
      const run = spawnSync(process.execPath, ['--import', 'tsx', cli, command, '--root', root], {
        encoding: 'utf8',
      })
      expect(run.status, command).toBe(1)
      expect(run.stderr, command).toMatch(/events\.ts:\d+:\d+: TS\d+/)
    }
  }, 120_000)

  it('interface P extends NoSuchBase is an error naming NoSuchBase', () => {
    const root = makeRepo('mini')
    edit(root, TODO, (t) =>
      t.replace('export interface TodoItem {', 'export interface TodoItem extends NoSuchBase {'),
    )
    const text = problemsOf(root)
    expect(text).toContain('NoSuchBase')
    expect(text).toContain('TS2304')
  })

  it('an error outside any persisted declaration does not block gen', () => {
    const root = makeRepo('mini')
    write(root, 'packages/todo/todo/src/other.ts', 'export const n: number = "not a number"\n')
    expect(() => generateCatalog({ root })).not.toThrow()
  })
})

describe('declarations are discovered or refused, never skipped', () => {
  it('a merge in a .d.ts or .mts file is discovered', () => {
    const root = makeRepo('mini')
    const merge = (event: string) => eventsSource([[event, '{ at: number }', { at: 1 }]])
    write(root, 'packages/todo/todo/src/extra.d.ts', merge('todo/from-dts'))
    write(root, 'packages/todo/todo/src/more.mts', `${merge('todo/from-mts')}export {}\n`)
    const gen = generateCatalog({ root })
    expect(gen.catalog.events['todo/from-dts']?.owner).toBe('@keel/todo')
    expect(gen.catalog.events['todo/from-mts']?.owner).toBe('@keel/todo')
  })

  it('a declare global merge is refused', () => {
    const root = makeRepo('mini')
    write(
      root,
      'packages/todo/todo/src/global.ts',
      "declare global {\n  interface SessionEventMap {\n    /** Global. */\n    'todo/global': { a: string }\n  }\n}\nexport {}\n",
    )
    expect(problemsOf(root)).toMatch(
      /global\.ts:2: an interface SessionEventMap declared in `declare global`/,
    )
  })

  it('event type names are checked: owner/verb, lower-case kebab segments', () => {
    const root = makeRepo('mini')
    edit(root, TODO, (t) => t.replace("'todo/write'", "'Todo/write_all'"))
    expect(problemsOf(root)).toContain("event type 'Todo/write_all' must be 'owner/verb'")
  })

  it('change-record file names cannot collide', () => {
    const names = ['a/b', 'a/b/c', 'a-b/c', 'a/b-c', '(header)', '(envelope)', '(surface)', '(jsonl-header)']
    const paths = names.map((n) => recordPath(1, n))
    expect(new Set(paths).size).toBe(names.length)
    expect(() => recordPath(1, 'a__b/c')).toThrow()
    expect(() => recordPath(1, '_header')).toThrow()
  })
})

describe('verify result is labelled path by path', () => {
  it('each changed path carries its own class, not the event worst', () => {
    const root = makeRepo('mini')
    generateAndWrite({ root, snapshot: true })
    edit(root, TODO, (t) => t.replace('  text: string', '  text?: string\n  extra: number'))
    const changes = verifyCatalog({ root }).semanticChanges
    expect(changes).toContain('todo/write.data.todos[].text: required → optional  [widening]')
    expect(changes).toContain('todo/write.data.todos[]: required property added: extra  [breaking]')
  })
})

describe('structure and classification', () => {
  /** Snapshot a todo/extra event `{ v: before }`, change it to `{ v: after }`, return verify's changes. */
  function change(before: string, after: string, v: unknown, vAfter = v): string[] {
    const root = makeRepo('mini')
    const file = 'packages/todo/todo/src/extra.ts'
    write(root, file, eventsSource([['todo/extra', `{ v: ${before} }`, { v }]]))
    generateAndWrite({ root, snapshot: true })
    write(root, file, eventsSource([['todo/extra', `{ v: ${after} }`, { v: vAfter }]]))
    return verifyCatalog({ root }).semanticChanges
  }

  it('template literal → string is widening', () => {
    const template = ['`todo-$', '{string}`'].join('')
    expect(change(template, 'string', 'todo-a')).toEqual([
      `todo/extra.data.v: ${template} → string  [widening]`,
    ])
  })

  it('an added optional tuple element is widening; an added required one breaking', () => {
    expect(change('[string, number]', '[string, number, boolean?]', ['a', 1])).toEqual([
      'todo/extra.data.v[2]: optional element added  [widening]',
    ])
    expect(change('[string]', '[string, number]', ['a'], ['a', 1])[0]).toMatch(/\[breaking\]$/)
  })

  it('never → T is widening', () => {
    // `{ v: never }` has no value: its example is an optional `v` left out.
    const root = makeRepo('mini')
    const file = 'packages/todo/todo/src/extra.ts'
    write(root, file, eventsSource([['todo/extra', '{ v?: never }', {}]]))
    generateAndWrite({ root, snapshot: true })
    write(root, file, eventsSource([['todo/extra', '{ v?: string }', {}]]))
    expect(verifyCatalog({ root }).semanticChanges).toEqual(['todo/extra.data.v: never → string  [widening]'])
  })

  it('a union of structurally identical members collapses to the member', () => {
    const root = makeRepo('mini')
    write(
      root,
      'packages/todo/todo/src/extra.ts',
      eventsSource(
        [
          ['todo/union', '{ v: A | B }', { v: { a: 'x' } }],
          ['todo/plain', '{ v: { a: string } }', { v: { a: 'x' } }],
        ],
        'interface A { a: string }\ninterface B { a: string }\n',
      ),
    )
    const { catalog } = generateCatalog({ root })
    expect(catalog.events['todo/union']!.digest).toBe(catalog.events['todo/plain']!.digest)
  })
})

describe('the envelope, the surface set, the header and physical headers are format', () => {
  const TYPES = 'packages/core/session/src/types.ts'
  function snapshotted(): string {
    const root = makeRepo('mini')
    write(
      root,
      'packages/store/store-jsonl/package.json',
      JSON.stringify({ name: '@keel/store-jsonl', type: 'module' }),
    )
    write(
      root,
      'packages/store/store-jsonl/src/index.ts',
      "import type { SessionHeader } from '@keel/session'\n\n/** First line of a JSONL log. */\nexport interface PhysicalHeader {\n  format: 'keel-session-jsonl'\n  formatVersion: number\n  header: SessionHeader\n}\n",
    )
    generateAndWrite({ root, snapshot: true })
    expect(verifyCatalog({ root }).ok).toBe(true)
    return root
  }

  it('renaming an envelope field is a breaking change', () => {
    const root = snapshotted()
    edit(root, TYPES, (t) => t.replace('  seq: SessionSeq', '  position: SessionSeq'))
    const result = verifyCatalog({ root })
    expect(result.ok).toBe(false)
    expect(result.semanticChanges).toContain('(envelope): property removed: seq  [breaking]')
  })

  it('a change to the set of surface event types is a breaking change', () => {
    const root = snapshotted()
    edit(root, TYPES, (t) =>
      t.replace(
        "export type SurfaceEventType = 'user/message'",
        "export type SurfaceEventType = 'user/message' | 'tool/call'",
      ),
    )
    const result = verifyCatalog({ root })
    expect(result.ok).toBe(false)
    expect(result.semanticChanges).toContain("surface: 'tool/call' became a surface event type  [breaking]")
  })

  it('the JSONL physical header is fingerprinted', () => {
    const root = snapshotted()
    edit(root, 'packages/store/store-jsonl/src/index.ts', (t) =>
      t.replace('  formatVersion: number', '  version: number'),
    )
    const result = verifyCatalog({ root })
    expect(result.ok).toBe(false)
    expect(result.semanticChanges).toContain('(jsonl-header): property removed: formatVersion  [breaking]')
  })
})

describe('snapshots are tamper-evident', () => {
  it('a hand-edited snapshot fails verify', () => {
    const root = makeRepo('mini')
    generateAndWrite({ root, snapshot: true })
    edit(root, 'docs/persistence/formats/v1.json', (t) =>
      t.replace('"formatVersion": 1', '"formatVersion": 1,\n  "note": "edited"'),
    )
    const result = verifyCatalog({ root })
    expect(result.ok).toBe(false)
    expect(result.historyProblems.join('\n')).toContain('v1.json does not match its seal')
  })

  it('a hand edit that absorbs a breaking change into the snapshot is caught by the seal', () => {
    const root = makeRepo('mini')
    generateAndWrite({ root, snapshot: true })
    edit(root, TODO, (t) => t.replace('  text: string', '  text: number'))
    // the hand-made "snapshot" of the new code, without a version bump
    write(
      root,
      'docs/persistence/formats/v1.json',
      generateCatalog({ root }).files['docs/persistence-catalog.json']!,
    )
    generateAndWrite({ root })
    const result = verifyCatalog({ root })
    expect(result.ok).toBe(false)
    expect(result.historyProblems.join('\n')).toContain('does not match its seal')
  })

  it('--snapshot --force rewrites compatible changes but refuses a breaking one', () => {
    const root = makeRepo('mini')
    generateAndWrite({ root, snapshot: true })
    edit(root, TODO, (t) => t.replace('  text: string', '  text: string\n  note?: string'))
    expect(() => generateAndWrite({ root, snapshot: true, force: true })).not.toThrow()
    expect(verifyCatalog({ root }).ok).toBe(true)
    edit(root, TODO, (t) => t.replace('  text: string', '  text: number'))
    expect(() => generateAndWrite({ root, snapshot: true, force: true })).toThrow(
      /--force cannot absorb a breaking change/,
    )
    expect(verifyCatalog({ root }).ok).toBe(false)
  })
})

describe('the committed catalog names declarations, not lines', () => {
  it('a comment line added at the top of a types file passes verify', () => {
    const root = makeRepo('mini')
    generateAndWrite({ root, snapshot: true })
    edit(root, TODO, (t) => `// a new comment line\n${t}`)
    edit(root, 'packages/core/session/src/types.ts', (t) => `// another one\n\n${t}`)
    const result = verifyCatalog({ root })
    expect(result.messages.join('\n')).toContain('up to date')
    expect(result.ok).toBe(true)
  })
})

describe('the migration chain is proven from the code that runs', () => {
  it('a registerMigration in an unimported file, or an unused parameter of that name, does not count', () => {
    const root = makeRepo('mini')
    generateAndWrite({ root, snapshot: true })
    edit(root, TODO, (t) => t.replace('  text: string', '  text: number'))
    edit(root, 'packages/core/session/src/types.ts', (t) =>
      t.replace('SESSION_FORMAT_VERSION = 1', 'SESSION_FORMAT_VERSION = 2'),
    )
    write(
      root,
      'packages/todo/todo/src/unimported.ts',
      "import { registerMigration } from '@keel/session'\n\nregisterMigration({ from: 1, to: 2, description: 'never runs' })\n",
    )
    write(
      root,
      'packages/todo/todo/src/decoy.ts',
      'export function decoy(registerMigration: (m: { from: number; to: number }) => void) {\n  return registerMigration\n}\nexport const steps = () => decoy(() => {})({ from: 1, to: 2 })\n',
    )
    generateAndWrite({ root, record: 'texts became numbers' })
    const result = verifyCatalog({ root })
    expect(result.ok).toBe(false)
    expect(result.historyProblems.join('\n')).toContain('no migration from format 1 to 2 is registered')
  }, 120_000)
})

describe('JSDoc of referenced types is rendered', () => {
  it('editing the JSDoc of TodoItem needs a regeneration', () => {
    const root = makeRepo('mini')
    generateAndWrite({ root, snapshot: true })
    edit(root, TODO, (t) =>
      t.replace('/** One entry of the todo list. */', '/** One entry of the todo list; ids are stable. */'),
    )
    const result = verifyCatalog({ root })
    expect(result.ok).toBe(false)
    expect(result.staleFiles).toContain('docs/persistence-catalog.md')
    expect(result.semanticChanges).toEqual([])
    generateAndWrite({ root })
    expect(readFileSync(join(root, 'docs/persistence-catalog.md'), 'utf8')).toContain(
      'One entry of the todo list; ids are stable.',
    )
    expect(verifyCatalog({ root }).ok).toBe(true)
  })
})
