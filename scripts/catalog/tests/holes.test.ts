// Holes in the catalog (issue 19), each reproduced against the earlier generator, which let a
// change to what is on disk through or broke the tool: each must now be refused or caught.
import { afterAll, describe, expect, it, vi } from 'vitest'
import { generateCatalog } from '../generate.js'
import { generateAndWrite } from '../release.js'
import { verifyCatalog } from '../verify.js'
import { catalogOf, cleanRepos, edit, eventsSource, makeRepo, problemsOf, write } from './helpers.js'

afterAll(cleanRepos)
// Each verify and snapshot loads the golden logs in a child process: slow on a loaded machine.
vi.setConfig({ testTimeout: 120_000 })

const EXTRA = 'packages/todo/todo/src/extra.ts'
const TYPES = 'packages/core/session/src/types.ts'

/** The digest of `todo/x` whose payload is `payload`, with `preamble` before the merge. */
function digestOf(payload: string, preamble: string, example: unknown): string {
  const root = makeRepo('mini')
  write(root, EXTRA, eventsSource([['todo/x', payload, example]], preamble))
  return generateCatalog({ root }).catalog.events['todo/x']!.digest
}

describe('1. a template literal over a branded alias is fingerprinted by its structure', () => {
  const tpl = ['`id-$', '{NoteId}`'].join('')
  const brand = (base: string, name = 'NoteId') =>
    `import type { Brand } from '@keel/base'\ntype ${name} = Brand<${base}, '${name}'>\n`
  const payload = (name = 'NoteId') => `{ v: ${tpl.replace('NoteId', name)} }`

  it("changing the brand's base type changes the digest; renaming the alias does not", () => {
    const asString = digestOf(payload(), brand('string'), { v: 'id-a' })
    expect(digestOf(payload(), brand('number'), { v: 'id-1' })).not.toBe(asString)
    expect(digestOf(payload('OtherId'), brand('string', 'OtherId'), { v: 'id-a' })).toBe(asString)
  })

  it('the pattern follows the base type: a number brand accepts only numbers', () => {
    const root = makeRepo('mini')
    write(root, EXTRA, eventsSource([['todo/x', payload(), { v: 'id-abc' }]], brand('number')))
    expect(problemsOf(root)).toContain("the @example of 'todo/x' fails its own validator")
  })
})

describe('2. a type from outside the repository is refused even inside a conditional type', () => {
  const npm = "import type { Stats } from 'node:fs'\n"

  it('refused naming the event and the type, whichever way the condition goes', () => {
    for (const branch of ['string : number', 'number : string']) {
      const root = makeRepo('mini')
      write(
        root,
        EXTRA,
        eventsSource([['todo/x', `{ v: Stats extends object ? ${branch} }`, { v: 'a' }]], npm),
      )
      expect(problemsOf(root)).toMatch(/extra\.ts:\d+: event 'todo\/x' reaches Stats, which does not resolve/)
    }
  })

  it('also through a generic alias that an instantiation resolves away', () => {
    const root = makeRepo('mini')
    const preamble = `${npm}type IsStats<T> = T extends Stats ? 'yes' : 'no'\n`
    write(root, EXTRA, eventsSource([['todo/x', '{ v: IsStats<string> }', { v: 'no' }]], preamble))
    expect(problemsOf(root)).toContain("event 'todo/x' reaches Stats")
  })

  it('an @types/node global (never loaded) is refused too', () => {
    const root = makeRepo('mini')
    const preamble = "type IsBuffer<T> = T extends Buffer ? 'yes' : 'no'\n"
    write(root, EXTRA, eventsSource([['todo/x', '{ v: IsBuffer<string> }', { v: 'no' }]], preamble))
    expect(problemsOf(root)).toContain("event 'todo/x' reaches Buffer")
  })
})

describe('3. an event map merged through a re-export under another name', () => {
  it('is refused, naming the interface, instead of skipped', () => {
    const root = makeRepo('mini')
    write(
      root,
      'packages/todo/todo/src/map.ts',
      "export type { SessionEventMap as TodoEvents } from '@keel/session'\n",
    )
    write(
      root,
      EXTRA,
      "import type {} from './map.js'\n\ndeclare module './map.js' {\n  interface TodoEvents {\n    /** x. @example {\"v\":\"a\"} */\n    'todo/x': { v: string }\n  }\n}\n",
    )
    expect(problemsOf(root)).toContain(
      "extra.ts:4: interface TodoEvents of './map.js' merges into SessionEventMap through a re-export under another name",
    )
  })

  it('members inherited with extends are refused', () => {
    const root = makeRepo('mini')
    write(
      root,
      EXTRA,
      "import type {} from '@keel/session'\n\ninterface More {\n  /** x. @example {\"v\":\"a\"} */\n  'todo/x': { v: string }\n}\n\ndeclare module '@keel/session' {\n  interface SessionEventMap extends More {}\n}\n",
    )
    const text = problemsOf(root)
    expect(text).toContain('SessionEventMap must not extend another interface')
    expect(text).toContain("the type checker sees event 'todo/x' in SessionEventMap")
  })
})

describe("7. a property named '__@x' is a property, not a symbol key", () => {
  it('is in the digest, the schema and the validator', () => {
    const root = makeRepo('mini')
    write(root, EXTRA, eventsSource([['todo/x', "{ '__@x': string; y: number }", { '__@x': 'a', y: 1 }]]))
    const gen = generateCatalog({ root })
    const schema = gen.catalog.events['todo/x']!.schema as { required: string[] }
    expect(schema.required).toEqual(['__@x', 'y'])
    expect(gen.files['packages/todo/todo/src/events.generated.ts']).toContain('"__@x": z.string()')
    write(root, EXTRA, eventsSource([['todo/x', '{ y: number }', { y: 1 }]]))
    expect(generateCatalog({ root }).catalog.events['todo/x']!.digest).not.toBe(
      gen.catalog.events['todo/x']!.digest,
    )
  })
})

describe('8. SESSION_FORMAT_VERSION must be an integer literal', () => {
  it('`: number = 2` is refused instead of read as format 1', () => {
    const root = makeRepo('mini')
    edit(root, TYPES, (t) => t.replace('SESSION_FORMAT_VERSION = 1', 'SESSION_FORMAT_VERSION: number = 2'))
    expect(problemsOf(root)).toMatch(
      /types\.ts:\d+: SESSION_FORMAT_VERSION has type number; it must be an integer literal/,
    )
  })
})

describe('10. a recursive generic whose instantiations grow', () => {
  it('is refused naming the type and the event, not a stack overflow', () => {
    const root = makeRepo('mini')
    write(
      root,
      EXTRA,
      eventsSource(
        [['todo/x', '{ v: Deep<string> }', { v: { v: 'a' } }]],
        'type Deep<T> = { v: T; next?: Deep<[T]> }\n',
      ),
    )
    expect(problemsOf(root)).toMatch(
      /event 'todo\/x' payload at data\.v\.next[.next]*: the recursive generic type Deep grows/,
    )
  })

  it('an interface growing the same way too', () => {
    const root = makeRepo('mini')
    write(
      root,
      EXTRA,
      eventsSource(
        [['todo/x', '{ v: Deep<string> }', { v: { v: 'a' } }]],
        'interface Deep<T> { v: T; next?: Deep<T[]> }\n',
      ),
    )
    expect(problemsOf(root)).toContain('the recursive generic type Deep grows')
  })
})

describe('11. every @example is required, JSON, and passes its own validator', () => {
  it('a missing, a non-JSON and an invalid example are each refused', () => {
    const root = makeRepo('mini')
    write(
      root,
      EXTRA,
      "import type {} from '@keel/session'\n\ndeclare module '@keel/session' {\n  interface SessionEventMap {\n    /** None. */\n    'todo/none': { v: string }\n    /** Not JSON. @example {v: 'a'} */\n    'todo/text': { v: string }\n    /** Invalid. @example {\"v\":1} */\n    'todo/bad': {\n      /** @minLength 2 */\n      v: string\n    }\n  }\n}\n",
    )
    const text = problemsOf(root)
    expect(text).toMatch(/extra\.ts:6: event 'todo\/none' has no @example/)
    expect(text).toMatch(/extra\.ts:8: the @example of 'todo\/text' is not JSON/)
    expect(text).toMatch(/extra\.ts:10: the @example of 'todo\/bad' fails its own validator: data\.v: /)
    write(
      root,
      EXTRA,
      eventsSource([['todo/bad', '{\n      /** @minLength 2 */\n      v: string\n    }', { v: 'a' }]]),
    )
    expect(problemsOf(root)).toMatch(/'todo\/bad' fails its own validator: data\.v: Too small/)
  })
})

describe('also', () => {
  it('a tuple with a rest element in the middle is refused, naming the event', () => {
    const root = makeRepo('mini')
    write(
      root,
      EXTRA,
      eventsSource([['todo/mid', '{ v: [string, ...number[], boolean] }', { v: ['a', true] }]]),
    )
    expect(problemsOf(root)).toContain(
      "event 'todo/mid' payload at data.v: the tuple [string, ...number[], boolean] has a rest element before fixed ones",
    )
  })

  it('a numeric enum with a member inserted first is breaking', () => {
    const root = makeRepo('mini')
    const source = (members: string) =>
      eventsSource([['todo/x', '{ v: Level }', { v: 0 }]], `export enum Level { ${members} }\n`)
    write(root, EXTRA, source('A, B'))
    generateAndWrite({ root, snapshot: true })
    write(root, EXTRA, source('Z, A, B'))
    const changes = verifyCatalog({ root }).semanticChanges
    expect(changes).toContain('todo/x.data.v: union member removed: A = 0  [breaking]')
    expect(changes.some((c) => c.endsWith('[widening]') && c.includes('Z = 0'))).toBe(true)
  })

  it('a string enum is its values: renaming a member changes nothing', () => {
    const source = (name: string) => `export enum Color { ${name} = 'red', Blue = 'blue' }\n`
    const root = makeRepo('mini')
    write(root, EXTRA, eventsSource([['todo/x', '{ v: Color }', { v: 'red' }]], source('Red')))
    const before = catalogOf(root).events['todo/x']!.digest
    write(root, EXTRA, eventsSource([['todo/x', '{ v: Color }', { v: 'red' }]], source('Crimson')))
    expect(catalogOf(root).events['todo/x']!.digest).toBe(before)
  })

  it('a misspelt refinement tag is an error naming the tag it was meant to be', () => {
    const root = makeRepo('mini')
    write(
      root,
      EXTRA,
      eventsSource([['todo/x', '{\n      /** @minLenght 1 */\n      v: string\n    }', { v: 'a' }]]),
    )
    expect(problemsOf(root)).toContain('@minLenght is not a refinement tag: did you mean @minLength?')
    write(
      root,
      EXTRA,
      eventsSource([
        ['todo/x', '{\n      /** @default "a" @see elsewhere */\n      v: string\n    }', { v: 'a' }],
      ]),
    )
    expect(() => generateCatalog({ root })).not.toThrow()
  })
})
