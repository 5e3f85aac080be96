// Every normalization rule of docs/guides/persistence-catalog.md ("Fingerprints": what does
// and does not change a digest), both ways: a pair that must share a digest and a
// pair that must not. The fixture `rules` declares, per rule, `<rule>/same-a`, `<rule>/same-b`
// (equal) and `<rule>/diff-b` (differs from `same-a`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { MachineCatalog } from '../catalog-json.js'
import { generateCatalog } from '../generate.js'
import { catalogOf, cleanRepos, makeRepo, write } from './helpers.js'

let catalog: MachineCatalog

beforeAll(() => {
  catalog = catalogOf(makeRepo('mini', 'rules'))
})
afterAll(cleanRepos)

const digest = (event: string) => {
  const e = catalog.events[event]
  if (!e) throw new Error(`no event ${event}`)
  return e.digest
}
/** Digest of a property of an event's payload. */
const prop = (event: string, name: string) => {
  const form = catalog.types[digest(event)]!.form
  if (form.k !== 'object') throw new Error(`${event} payload is not an object`)
  return form.props[name]!.t
}

const RULES: Array<[rule: string, what: string]> = [
  ['comments', 'comments and JSDoc'],
  ['position', 'source position (same structure declared in another file)'],
  ['alias', 'type alias versus inline type'],
  ['iface', 'interface versus type literal'],
  ['brand', 'brand erasure (Brand<T, Name> is T)'],
  ['readonly', 'readonly modifiers and ReadonlyArray'],
  ['order-object', 'member order in objects'],
  ['order-union', 'member order in unions'],
  ['order-intersection', 'member order in intersections'],
  ['optional-undefined', '`p?: T | undefined` versus `p?: T`'],
  ['intersection', 'object intersection versus merged object'],
  ['rename', 'property rename (alias rename is free)'],
  ['value', 'value type change'],
  ['optionality', 'optional ↔ required'],
  ['literal', 'literal value change'],
  ['tuple', 'tuple element order'],
  ['tuple-array', 'tuple versus array'],
  ['union', 'union member added or removed'],
  ['boolean', 'boolean is true | false'],
  ['json', 'recursive JSON value type'],
  ['list', 'recursive interface versus recursive type literal'],
  ['mapped', 'mapped types (Omit, Partial) versus the written-out object'],
  ['enum', 'a string enum versus its literal values'],
]

describe('normalization rules', () => {
  for (const [rule, what] of RULES) {
    it(`${what}: same digest`, () => {
      expect(digest(`${rule}/same-a`)).toBe(digest(`${rule}/same-b`))
    })
    it(`${what}: different digest`, () => {
      expect(digest(`${rule}/diff-b`)).not.toBe(digest(`${rule}/same-a`))
    })
  }

  it('a shared type referenced from two events has one digest in both', () => {
    expect(prop('shared/same-a', 'todo')).toBe(prop('shared/same-b', 'other'))
    expect(prop('shared/diff-b', 'other')).not.toBe(prop('shared/same-a', 'todo'))
    expect(catalog.types[prop('shared/same-a', 'todo')]!.names).toContain('Named')
  })

  it('a recursive type has the same digest wherever it is entered (optional, required, array element)', () => {
    const a = prop('json/same-a', 'a')
    const b = prop('json/same-a', 'b')
    const c = catalog.types[prop('json/same-a', 'c')]!.form
    expect(a).toBe(b)
    expect(c).toEqual({ k: 'array', of: a })
    const named = Object.entries(catalog.types).filter(([, t]) => t.names?.includes('JsonValue'))
    expect(named).toHaveLength(1)
    expect(named[0]![0]).toBe(a)
    // The independent declaration is the same class, so it shares the entry and its names.
    expect(named[0]![1].names).toEqual(['JsonValue', 'OtherJson'])
    const form = catalog.types[a]!.form
    expect(form.k).toBe('union')
    if (form.k === 'union') expect(form.of).toHaveLength(6)
  })

  it('boolean folds back from true | false and is listed as one primitive', () => {
    const b = prop('boolean/same-b', 'b')
    expect(catalog.types[b]!.form).toEqual({ k: 'boolean' })
  })

  it('brand markers (unique symbol keys such as __@brandKey@12) never reach the catalog', () => {
    const json = JSON.stringify(catalog)
    expect(json).not.toMatch(/__@/)
    expect(catalog.types[prop('brand/same-a', 'id')]!.form).toEqual({ k: 'string' })
  })

  it('every type in the table is reachable and every reference resolves', () => {
    for (const t of Object.values(catalog.types)) {
      const refs: string[] = []
      const f = t.form
      if (f.k === 'array') refs.push(f.of)
      if (f.k === 'union') refs.push(...f.of)
      if (f.k === 'tuple') refs.push(...f.items.map((i) => i.t))
      if (f.k === 'object') {
        refs.push(...Object.values(f.props).map((p) => p.t))
        if (f.index) refs.push(f.index)
      }
      for (const r of refs) expect(catalog.types[r], r).toBeDefined()
    }
  })
})

describe('JSON Schema (draft 2020-12) of payloads', () => {
  it('a tuple is fixed-length prefixItems; optional properties are not required', () => {
    const schema = catalog.events['tuple/same-a']!.schema as Record<string, unknown>
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema')
    expect(schema.properties).toEqual({
      t: {
        type: 'array',
        prefixItems: [{ type: 'string' }, { type: 'number' }],
        minItems: 2,
        maxItems: 2,
        items: false,
      },
    })
    const optional = catalog.events['optional-undefined/same-a']!.schema as Record<string, unknown>
    expect(optional.required).toBeUndefined()
    expect(optional.additionalProperties).toBe(false)
  })

  it('`p?: never` is a property that must be absent', () => {
    const schema = catalog.events['absent/never']!.schema as { properties: Record<string, unknown> }
    expect(schema.properties.gone).toBe(false)
    expect(catalog.events['absent/never']!.digest).not.toBe(catalog.events['rename/same-a']!.digest)
  })

  it('a recursive type goes through $defs and $ref', () => {
    const schema = catalog.events['list/same-a']!.schema as {
      properties: unknown
      $defs: Record<string, unknown>
    }
    expect(schema.properties).toEqual({ head: { $ref: '#/$defs/ListNode' } })
    expect(schema.$defs.ListNode).toEqual({
      type: 'object',
      properties: { next: { $ref: '#/$defs/ListNode' }, value: { type: 'string' } },
      required: ['value'],
      additionalProperties: false,
    })
  })
})

describe('independence from checker internals', () => {
  it('a digest does not depend on the order in which the checker first meets the member types', () => {
    const plain = catalogOf(makeRepo('mini'))
    const other = makeRepo('mini')
    // Loaded before packages/todo: creates the literal 'done' and an object type first, so the
    // checker's internal ids (and its union member order) differ from the plain run.
    write(
      other,
      'packages/aaa/first/package.json',
      '{ "name": "@keel/first", "private": true, "type": "module" }',
    )
    write(
      other,
      'packages/aaa/first/src/events.ts',
      "import type {} from '@keel/session'\n\ndeclare module '@keel/session' {\n  interface SessionEventMap {\n    /** First. */\n    'aaa/first': { x: 'done' | { id: string } }\n  }\n}\n",
    )
    const shifted = catalogOf(other)
    expect(shifted.events['aaa/first']).toBeDefined()
    expect(shifted.events['todo/write']!.digest).toBe(plain.events['todo/write']!.digest)
  })
})

describe('loading', () => {
  it('follows relative imports to a type outside the workspace sources', () => {
    const root = makeRepo('mini', 'external')
    const gen = generateCatalog({ root })
    expect(gen.catalog.events['ext/vendor']!.digest).toBe(gen.catalog.events['ext/inline']!.digest)
  })

  it('one loading mode: a payload reaching an npm type is refused on every run, never reloaded', () => {
    const root = makeRepo('mini')
    write(
      root,
      'packages/todo/todo/src/npm.ts',
      "import type { Shape } from 'some-npm-package'\n\ndeclare module '@keel/session' {\n  interface SessionEventMap {\n    /** Reaches an npm type. */\n    'todo/npm': { shape: Shape }\n  }\n}\n",
    )
    for (let run = 0; run < 2; run++) {
      let error: unknown
      try {
        generateCatalog({ root })
      } catch (e) {
        error = e
      }
      const messages =
        (error as { problems?: Array<{ message: string }> }).problems?.map((p) => p.message) ?? []
      expect(messages.join('\n')).toContain("event 'todo/npm' payload at data.shape")
      expect(messages.join('\n')).toContain('declared in this repository')
    }
  })
})
