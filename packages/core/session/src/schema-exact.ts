import type { z } from 'zod'
import { compileCheck, defOf, type SchemaCheck } from './schema-check.js'

/**
 * Refinements that only accept or refuse: zod's output is its input for them. Anything
 * else (an `overwrite` such as `.trim()`, which rewrites the value, or a check this list
 * does not know) makes a schema's output possibly differ from its input.
 */
const PURE_CHECKS = new Set([
  'min_length',
  'max_length',
  'length_equals',
  'greater_than',
  'less_than',
  'number_format',
  'multiple_of',
  'string_format',
])

const exact = new WeakMap<object, SchemaCheck | null>()

/**
 * The compiled check of `schema` when, for every value it accepts, zod's parsed output is
 * that same value (equal JSON; object keys in the value's order): strings, numbers,
 * booleans, null, literals, enums, unknown, strict objects (or objects with a catchall)
 * of such parts, arrays, records, unions, optional and nullable ones, with
 * accept-or-refuse refinements only. `undefined` for a schema that may rewrite what it
 * accepts (defaults, transforms, pipes, coercion, key stripping, `.trim()`…): that value
 * needs `safeParse`'s output. A value straight from `JSON.parse` it accepts can be used as
 * parsed, without building zod's copy.
 */
export function compileExactCheck(schema: z.ZodType<unknown>): SchemaCheck | undefined {
  let known = exact.get(schema)
  if (known === undefined) {
    known = outputIsInput(schema, new Set()) ? compileCheck(schema) : null
    exact.set(schema, known)
  }
  return known ?? undefined
}

function outputIsInput(schema: z.ZodType<unknown>, seen: Set<object>): boolean {
  if (seen.has(schema)) return true // a recursive reference: decided by the rest of the walk
  seen.add(schema)
  const def = defOf(schema)
  const pure = (def.checks ?? []).every((check) =>
    PURE_CHECKS.has((check._zod.def as { check?: string }).check ?? ''),
  )
  if (!pure) return false
  const inner = (s: z.ZodType<unknown> | null | undefined) => s == null || outputIsInput(s, seen)
  switch (def.type) {
    case 'string':
    case 'number':
    case 'boolean':
    case 'null':
    case 'unknown':
    case 'any':
    case 'literal':
    case 'enum':
      return true
    case 'optional':
    case 'nullable':
      return inner(def.innerType)
    case 'lazy':
      return inner(def.getter!())
    case 'array':
      return inner(def.element)
    case 'union':
      return def.options!.every(inner)
    case 'record':
      return inner(def.keyType) && inner(def.valueType)
    case 'object':
      // no catchall: zod strips unknown keys, so its output may lack some of the input's
      if (def.catchall === undefined) return false
      return (
        Object.values(def.shape!).every(inner) &&
        (defOf(def.catchall).type === 'never' || inner(def.catchall))
      )
    default:
      return false
  }
}
