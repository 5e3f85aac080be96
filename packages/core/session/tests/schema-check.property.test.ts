import { compileCheck, compileExactCheck, registeredEventTypes } from '@keel/session'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import './fixtures/plugin/src/index.js'

type AnySchema = z.ZodType<unknown>
interface Def {
  type: string
  [key: string]: unknown
}
const defOf = (s: AnySchema) => (s as unknown as { _zod: { def: Def } })._zod.def

/** Values shaped like `schema` (valid ones and near misses), by construction. */
function shaped(schema: AnySchema, depth = 0): fc.Arbitrary<unknown> {
  const def = defOf(schema)
  const sub = (s: unknown) => shaped(s as AnySchema, depth + 1)
  switch (def.type) {
    case 'string': {
      const regex = (def.checks as { _zod: { def: { pattern?: RegExp } } }[] | undefined)?.find(
        (c) => c._zod.def.pattern,
      )?._zod.def.pattern
      const near = fc.oneof(fc.string({ maxLength: 5 }), fc.constantFrom('', 'a', '😀', 'é', 'e\u0301', '.x'))
      return regex ? fc.oneof(fc.stringMatching(regex), near) : near
    }
    case 'number':
      return fc.oneof(
        fc.integer({ min: -2, max: 4 }),
        fc.double(),
        fc.constantFrom(0, 1.5, -0, 2 ** 60, 2 ** 31, -(2 ** 31), 2 ** 32, 2 ** 53, 4e38, Number.NaN),
      )
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    case 'unknown':
    case 'any':
      return fc.jsonValue({ maxDepth: 2 })
    case 'literal':
      return fc.constantFrom(...(def.values as unknown[]))
    case 'enum':
      return fc.constantFrom(...Object.values(def.entries as object))
    case 'optional':
      return fc.option(sub(def.innerType), { nil: undefined })
    case 'nullable':
      return fc.option(sub(def.innerType), { nil: null })
    case 'lazy':
      return depth > 4 ? fc.constant(null) : sub((def.getter as () => unknown)())
    case 'array':
      return fc.array(sub(def.element), { maxLength: depth > 3 ? 0 : 3 })
    case 'tuple':
      return fc.tuple(...(def.items as unknown[]).map(sub))
    case 'union':
      return fc.oneof(...(def.options as unknown[]).map(sub))
    case 'record':
      return fc.dictionary(fc.string({ maxLength: 3 }), sub(def.valueType), { maxKeys: 3 })
    case 'object': {
      const shape = def.shape as Record<string, AnySchema>
      const optional = Object.keys(shape).filter((k) => defOf(shape[k]!).type === 'optional')
      const required = Object.keys(shape).filter((k) => !optional.includes(k))
      return fc.record(Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, sub(v)])), {
        requiredKeys: required,
      })
    }
    default:
      return fc.jsonValue({ maxDepth: 2 })
  }
}

/** `value` with the node at `pick` (in a walk of its objects and arrays) replaced, dropped or grown. */
function mutate(
  value: unknown,
  pick: number,
  replacement: unknown,
  how: 'replace' | 'drop' | 'add',
): unknown {
  let n = 0
  const walk = (v: unknown): unknown => {
    if (v === null || typeof v !== 'object') return n++ === pick ? replacement : v
    const here = n++ === pick
    if (Array.isArray(v)) {
      const items = v.map(walk)
      if (here && how === 'drop') items.pop()
      if (here && how === 'add') items.push(replacement)
      return here && how === 'replace' ? replacement : items
    }
    const out: Record<string, unknown> = {}
    for (const [k, item] of Object.entries(v)) out[k] = walk(item)
    if (here && how === 'drop') delete out[Object.keys(out)[0] ?? '']
    if (here && how === 'add') out.extra = replacement
    return here && how === 'replace' ? replacement : out
  }
  return walk(value)
}

/** Values shaped like `schema`, half of them with one part replaced, dropped or added. */
function candidates(schema: AnySchema): fc.Arbitrary<unknown> {
  return fc
    .tuple(
      shaped(schema),
      fc.nat({ max: 30 }),
      fc.jsonValue({ maxDepth: 2 }),
      fc.constantFrom('replace' as const, 'drop' as const, 'add' as const),
      fc.boolean(),
    )
    .map(([value, pick, replacement, how, mutated]) =>
      mutated ? mutate(value, pick, replacement, how) : value,
    )
}

const tree: AnySchema = z.lazy(() => z.strictObject({ name: z.string(), children: z.array(tree).optional() }))
const synthetic: Record<string, AnySchema> = {
  'non-strict object': z.object({ a: z.number().int().lte(3) }),
  'object with catchall': z.strictObject({ a: z.string() }).catchall(z.number()),
  record: z.record(z.string(), z.boolean()),
  tuple: z.tuple([z.string(), z.number().optional()]),
  'tuple with rest': z.tuple([z.string()], z.number()),
  nullable: z.nullable(z.string().max(2)),
  union: z.union([z.literal(1), z.string().min(2), z.null()]),
  refine: z.array(z.number()).refine((a) => new Set(a).size === a.length),
  superRefine: z.array(z.number()).superRefine((a, ctx) => {
    if (a.length > 2) ctx.addIssue({ code: 'custom', message: 'too long' })
  }),
  'lazy tree': tree,
  'array length': z.array(z.string()).min(1).max(2),
  'unknown required': z.strictObject({ a: z.unknown() }),
  'number bounds': z.number().gt(0).lt(10).multipleOf(0.5),
  'seq (int, nonnegative)': z.number().int().nonnegative(),
  'int exclusive bounds': z.number().int().gt(-1).lt(3),
  'float bounds, inclusive and exclusive': z.number().gte(-2).lt(1.5),
  'bounds tighter then looser': z.number().lte(2).lte(4).gte(0).gt(-1),
  int32: z.int32(),
  'uint32 with max': z.uint32().max(3),
  float32: z.float32(),
  'array of anything': z.array(z.unknown()),
  'array of anything, bounded': z.array(z.any()).max(2),
  // generated checks (object schemas): unions inside arrays inside unions, min lengths in and out of line
  'nested unions in objects': z.strictObject({
    items: z.array(
      z.union([
        z.strictObject({
          kind: z.literal('a'),
          id: z.string().min(1),
          n: z.number().int().gte(0).optional(),
        }),
        z.strictObject({ kind: z.literal('b'), tags: z.array(z.union([z.string().min(2), z.null()])) }),
        z.union([z.strictObject({ kind: z.literal('c') }), z.literal(3)]),
      ]),
    ),
    mode: z.enum(['x', 'y']).optional(),
    note: z.nullable(z.string().min(1)),
  }),
  'object of lazy, record and tuple parts': z.object({
    tree,
    map: z.record(z.string(), z.number()).optional(),
    pair: z.tuple([z.string(), z.boolean()]),
    label: z.literal(['p', 'q']),
  }),
  'object with refinements': z
    .strictObject({ list: z.array(z.number()).min(1), name: z.string().max(3) })
    .refine((o) => o.list.length !== 2),
}

const schemas: [string, AnySchema][] = [
  ...registeredEventTypes().map((r): [string, AnySchema] => [r.type, r.schema]),
  ...Object.entries(synthetic),
]

describe('the allocation-free schema check', () => {
  it.each(schemas)('agrees with zod on %s', (_name, schema) => {
    const check = compileCheck(schema)
    fc.assert(
      fc.property(candidates(schema), (v) => {
        expect(check(v)).toBe(schema.safeParse(v).success)
      }),
      { numRuns: 300 },
    )
  })

  it('accepts valid values without building anything (the value checked is the value kept)', () => {
    const schema = registeredEventTypes().find((r) => r.type === 'tool/call')!.schema
    const data = { turn: 1, step: 1, callId: 'c', name: 'read', arguments: '{}' }
    expect(compileCheck(schema)(data)).toBe(true)
    expect(compileCheck(schema)({ ...data, extra: 1 })).toBe(false)
    expect(compileCheck(schema)).toBe(compileCheck(schema))
  })
})

/** Tool-input-like schemas whose output is what they accept. */
const exactSchemas: Record<string, AnySchema> = {
  'strict object': z.strictObject({
    n: z.number().int(),
    path: z.string().min(1),
    flag: z.boolean().optional(),
  }),
  'nested parts': z.strictObject({
    edits: z.array(z.strictObject({ old: z.string(), new: z.string().max(4) })).min(1),
    mode: z.enum(['a', 'b']).nullable(),
    target: z.union([z.literal('x'), z.number().gte(0).lt(5)]),
    extra: z.record(z.string(), z.unknown()).optional(),
  }),
  'object with catchall': z.strictObject({ a: z.string() }).catchall(z.number()),
  'lazy tree': tree,
  'regex string': z.strictObject({ id: z.string().regex(/^[a-z]{1,3}$/u) }),
}

/** Schemas whose output may differ from what they accept: `safeParse` must build it. */
const rewriting: Record<string, AnySchema> = {
  'stripping object': z.object({ a: z.string() }),
  trim: z.strictObject({ a: z.string().trim() }),
  default: z.strictObject({ a: z.string().default('x') }),
  transform: z.strictObject({ a: z.string().transform((s) => s.length) }),
  refine: z.strictObject({ a: z.string() }).refine((o) => o.a !== 'b'),
  'union with a stripping option': z.union([z.strictObject({ a: z.string() }), z.object({ b: z.number() })]),
  tuple: z.tuple([z.string(), z.number().optional()]),
}

describe('the exact check (output is input)', () => {
  it.each(Object.entries(exactSchemas))(
    'accepts as zod does, and zod returns what it accepts: %s',
    (_name, schema) => {
      const check = compileExactCheck(schema)
      expect(check).toBeDefined()
      fc.assert(
        fc.property(candidates(schema), (v) => {
          const result = schema.safeParse(v)
          expect(check!(v)).toBe(result.success)
          if (result.success) expect(result.data).toEqual(v)
        }),
        { numRuns: 300 },
      )
    },
  )

  it.each(Object.entries(rewriting))('is not offered for a schema that may rewrite: %s', (_name, schema) => {
    expect(compileExactCheck(schema)).toBeUndefined()
  })
})
