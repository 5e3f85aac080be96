// Refinements written once as JSDoc tags: they enter the canonical form (digest), the JSON
// Schema and the generated validator, and verify classifies each change on its own.
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it, vi } from 'vitest'
import { stableJson } from '../catalog-json.js'
import { type Change, diffRefinements } from '../diff.js'
import { CatalogError } from '../errors.js'
import { generateCatalog } from '../generate.js'
import { generateAndWrite } from '../release.js'
import { verifyCatalog } from '../verify.js'
import { cleanRepos, edit, makeRepo } from './helpers.js'

afterAll(cleanRepos)
// Each verify and snapshot loads the golden logs in a child process: slow on a loaded machine.
vi.setConfig({ testTimeout: 120_000 })

const TODO = 'packages/todo/todo/src/events.ts'
const GENERATED = 'packages/todo/todo/src/events.generated.ts'

function fresh(): string {
  const root = makeRepo('mini')
  generateAndWrite({ root, snapshot: true })
  return root
}

const tagId = (tags: string) => (t: string) => t.replace('  id: string', `  /** ${tags} */\n  id: string`)

describe('refinement tags', () => {
  it('enter the digest, the JSON Schema and the generated validator', () => {
    const root = fresh()
    const before = generateCatalog({ root }).catalog.events['todo/write']!.digest
    edit(root, TODO, tagId('@minLength 1 @maxLength 64 @pattern ^[a-z0-9-]+$'))
    edit(root, TODO, (t) =>
      t.replace(
        "'todo/write': { todos: TodoItem[] }",
        "'todo/write': {\n      /** @uniqueBy id @maxItems 100 */\n      todos: TodoItem[]\n    }",
      ),
    )
    const gen = generateCatalog({ root })
    const event = gen.catalog.events['todo/write']!
    expect(event.digest).not.toBe(before)
    const schema = JSON.stringify(event.schema)
    expect(schema).toContain('"minLength":1')
    expect(schema).toContain('"maxLength":64')
    expect(schema).toContain('"pattern":"^[a-z0-9-]+$"')
    expect(schema).toContain('"x-uniqueBy":"id"')
    expect(schema).toContain('"maxItems":100')
    const validator = gen.files[GENERATED]!
    expect(validator).toContain(`id: z.string().min(1).max(64).regex(new RegExp("^[a-z0-9-]+$", 'u'))`)
    expect(validator).toContain('uniqueBy(items, "id")')
    expect(validator).toContain('.max(100)')
    expect(validator).toContain('registerEvents("@keel/todo", eventValidators)')
  })

  it('number tags: @integer → JSON Schema integer, bounds → zod checks', () => {
    const root = fresh()
    edit(root, TODO, (t) =>
      t.replace(
        '  text: string',
        '  text: string\n  /** @integer @minimum 1 @exclusiveMaximum 10 */\n  rank: number',
      ),
    )
    const gen = generateCatalog({ root })
    const schema = stableJson(gen.catalog.events['todo/write']!.schema).replace(/\s+/g, '')
    expect(schema).toContain('"rank":{"exclusiveMaximum":10,"minimum":1,"type":"integer"}')
    expect(gen.files[GENERATED]).toContain('rank: z.number().int().gte(1).lt(10)')
  })

  it('verify classifies tightening as breaking and loosening as widening, path by path', () => {
    const root = makeRepo('mini')
    edit(root, TODO, tagId('@minLength 1'))
    edit(root, TODO, (t) => t.replace('  text: string', '  /** @maxLength 100 */\n  text: string'))
    generateAndWrite({ root, snapshot: true })
    // raise one bound (tightening), drop another (loosening)
    edit(root, TODO, (t) => t.replace('/** @minLength 1 */', '/** @minLength 2 */'))
    edit(root, TODO, (t) => t.replace('/** @maxLength 100 */', '/** a plain comment */'))
    const result = verifyCatalog({ root })
    expect(result.ok).toBe(false)
    expect(result.semanticChanges).toContain('todo/write.data.todos[].id: @minLength 1 → 2  [breaking]')
    expect(result.semanticChanges).toContain(
      'todo/write.data.todos[].text: @maxLength 100 → none  [widening]',
    )
  })

  it('diffRefinements: each key on its own', () => {
    const out: Change[] = []
    diffRefinements(
      { minimum: 1, maximum: 10, pattern: 'a' },
      { minimum: 0, maximum: 5, integer: true },
      'x',
      out,
    )
    expect(out).toEqual([
      { text: 'x: @integer none → set', severity: 'breaking' },
      { text: 'x: @maximum 10 → 5', severity: 'breaking' },
      { text: 'x: @minimum 1 → 0', severity: 'widening' },
      { text: 'x: @pattern "a" → none', severity: 'widening' },
    ])
  })

  it('a tag that does not fit the type, a bad value, or a tag on a lost alias is an error naming where', () => {
    const root = fresh()
    edit(root, TODO, tagId('@minimum 1'))
    edit(root, TODO, (t) => t.replace('  text: string', '  /** @pattern ([ */\n  text: string'))
    edit(root, TODO, (t) => `${t}\n/** @minLength 1 */\nexport type Label = string\n`)
    let error: unknown
    try {
      generateCatalog({ root })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(CatalogError)
    const text = (error as CatalogError).problems.map((p) => p.message).join('\n')
    expect(text).toContain(
      "event 'todo/write' payload at data.todos[].id: @minimum applies to number values, not to a string",
    )
    expect(text).toMatch(/data\.todos\[\]\.text: @pattern "\(\[" is not a valid regular expression/)
    expect(text).toContain('refinement tags on type Label would be lost')
  })

  it('a tag in a JSDoc comment TypeScript attaches to nothing (after `{` on the same line) is an error, not ignored', () => {
    const root = makeRepo('mini')
    edit(root, TODO, (t) =>
      t.replace(
        "'todo/write': { todos: TodoItem[] }",
        "'todo/write': { /** @maxItems 3 */ todos: TodoItem[] }",
      ),
    )
    let problems: string[] = []
    try {
      generateCatalog({ root })
    } catch (e) {
      if (!(e instanceof CatalogError)) throw e
      problems = e.problems.map((p) => `${p.code} ${p.message}`)
    }
    expect(problems).toEqual([
      expect.stringMatching(
        /^REFINEMENT_LOST packages\/todo\/todo\/src\/events\.ts:\d+: this JSDoc comment with refinement tags belongs to no declaration/,
      ),
    ])
    // on its own line it is read
    edit(root, TODO, (t) =>
      t.replace('{ /** @maxItems 3 */ todos', '{\n      /** @maxItems 3 */\n      todos'),
    )
    expect(generateCatalog({ root }).files[GENERATED]).toContain('todos: z.array(todoItemSchema).max(3)')
  })

  it('a hand edit of a generated validator fails verify', () => {
    const root = fresh()
    const abs = join(root, GENERATED)
    writeFileSync(abs, readFileSync(abs, 'utf8').replace('z.string()', 'z.string().optional()'))
    const result = verifyCatalog({ root })
    expect(result.ok).toBe(false)
    expect(result.staleFiles).toContain(GENERATED)
  })
})
