// Property: a payload type and a rewriting of it that only changes what the digest must ignore
// (member order of objects and unions, readonly, ReadonlyArray, `| undefined` on optional
// members, object intersection versus merged object, `true | false` versus boolean, type
// aliases) have the same digest; renaming a property changes it.
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { catalogOf, cleanRepos, makeRepo, write } from './helpers.js'

afterAll(cleanRepos)

type T =
  | { k: 'prim'; p: 'string' | 'number' | 'boolean' | 'null' }
  | { k: 'lit'; v: string | number }
  | { k: 'arr'; of: T }
  | { k: 'tuple'; items: T[] }
  | { k: 'obj'; props: Array<{ name: string; opt: boolean; t: T }> }
  | { k: 'union'; of: T[] }

const names = ['alpha', 'beta', 'gamma', 'delta', 'eps', 'zeta']

const { tree } = fc.letrec<{ tree: T; obj: T }>((tie) => ({
  tree: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ k: fc.constant('prim' as const), p: fc.constantFrom('string', 'number', 'boolean', 'null') }),
    fc.record({
      k: fc.constant('lit' as const),
      v: fc.oneof(fc.constantFrom('on', 'off', 'x-y'), fc.integer({ min: -3, max: 3 })),
    }),
    fc.record({ k: fc.constant('arr' as const), of: tie('tree') }),
    fc.record({ k: fc.constant('tuple' as const), items: fc.array(tie('tree'), { maxLength: 3 }) }),
    tie('obj'),
    fc.record({
      k: fc.constant('union' as const),
      of: fc.array(tie('tree'), { minLength: 2, maxLength: 3 }),
    }),
  ),
  obj: fc.record({
    k: fc.constant('obj' as const),
    props: fc.uniqueArray(fc.record({ name: fc.constantFrom(...names), opt: fc.boolean(), t: tie('tree') }), {
      minLength: 1,
      maxLength: 4,
      selector: (p) => p.name,
    }),
  }),
}))
const root = fc.record({
  k: fc.constant('obj' as const),
  props: fc.uniqueArray(fc.record({ name: fc.constantFrom(...names), opt: fc.boolean(), t: tree }), {
    minLength: 1,
    maxLength: 4,
    selector: (p) => p.name,
  }),
})

/** The plain spelling. */
function plain(t: T): string {
  switch (t.k) {
    case 'prim':
      return t.p
    case 'lit':
      return JSON.stringify(t.v)
    case 'arr':
      return `(${plain(t.of)})[]`
    case 'tuple':
      return `[${t.items.map(plain).join(', ')}]`
    case 'obj':
      return `{ ${t.props.map((p) => `${p.name}${p.opt ? '?' : ''}: ${plain(p.t)}`).join('; ')} }`
    case 'union':
      return t.of.map((m) => `(${plain(m)})`).join(' | ')
  }
}

/** A spelling the digest must not see: reordered, readonly, intersections, explicit undefined, aliases. */
function rewritten(t: T, aliases: string[]): string {
  switch (t.k) {
    case 'prim':
      return t.p === 'boolean' ? '(false | true)' : t.p
    case 'lit': {
      const name = `L${aliases.length}`
      aliases.push(`type ${name} = ${JSON.stringify(t.v)}`)
      return name
    }
    case 'arr':
      return aliases.length % 2 === 0
        ? `ReadonlyArray<${rewritten(t.of, aliases)}>`
        : `readonly (${rewritten(t.of, aliases)})[]`
    case 'tuple':
      return `readonly [${t.items.map((i) => rewritten(i, aliases)).join(', ')}]`
    case 'obj': {
      const members = [...t.props]
        .reverse()
        .map(
          (p) =>
            `readonly ${p.name}${p.opt ? '?' : ''}: ${rewritten(p.t, aliases)}${p.opt ? ' | undefined' : ''}`,
        )
      if (members.length < 2) return `{ ${members.join('; ')} }`
      const half = Math.ceil(members.length / 2)
      return `({ ${members.slice(0, half).join('; ')} } & { ${members.slice(half).join('; ')} })`
    }
    case 'union':
      return [...t.of]
        .reverse()
        .map((m) => `(${rewritten(m, aliases)})`)
        .join(' | ')
  }
}

describe('fingerprint invariants (fast-check)', () => {
  it('rewritings that only change ignored details keep the digest; a property rename changes it', () => {
    let run = 0
    fc.assert(
      fc.property(fc.array(root, { minLength: 12, maxLength: 12 }), (types) => {
        const repo = makeRepo('mini')
        const aliases: string[] = []
        const members: string[] = []
        types.forEach((t, i) => {
          const renamed = {
            ...t,
            props: t.props.map((p, j) => (j === 0 ? { ...p, name: `renamed${i}` } : p)),
          }
          members.push(`    /** Plain ${i}. */\n    'p${i}/plain': ${plain(t)}`)
          members.push(`    /** Rewritten ${i}. */\n    'p${i}/rewritten': ${rewritten(t, aliases)}`)
          members.push(`    /** Renamed ${i}. */\n    'p${i}/renamed': ${plain(renamed)}`)
        })
        write(
          repo,
          `packages/prop/prop${run++}/package.json`,
          JSON.stringify({ name: `@keel/prop${run}`, private: true, type: 'module' }),
        )
        write(
          repo,
          `packages/prop/prop${run - 1}/src/events.ts`,
          `import type {} from '@keel/session'\n\n${aliases.join('\n')}\n\ndeclare module '@keel/session' {\n  interface SessionEventMap {\n${members.join('\n')}\n  }\n}\n`,
        )
        const events = catalogOf(repo).events
        types.forEach((_, i) => {
          expect(events[`p${i}/rewritten`]!.digest, `type ${i}`).toBe(events[`p${i}/plain`]!.digest)
          expect(events[`p${i}/renamed`]!.digest, `type ${i}`).not.toBe(events[`p${i}/plain`]!.digest)
        })
      }),
      { numRuns: 8, seed: 20261129 },
    )
  })
})
