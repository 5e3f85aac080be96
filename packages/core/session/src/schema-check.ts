import type { z } from 'zod'
import { generateCheck } from './schema-codegen.js'

/**
 * A check of a value against a schema that says only yes or no and allocates nothing on
 * success: no output object, no issue list. `safeParse` builds a fresh output for every
 * object it accepts, which a load throws away at once (the stored value is kept), so on
 * the load and append hot paths the registered schemas run through this instead; only a
 * value it refuses goes through `safeParse`, for the message.
 */
export type SchemaCheck = (value: unknown) => boolean

/** The parts of zod's internal definition this module reads (zod 4: `schema._zod.def`). */
export interface Def {
  readonly type: string
  readonly checks?: readonly CheckLike[]
  readonly shape?: Readonly<Record<string, z.ZodType<unknown>>>
  readonly catchall?: z.ZodType<unknown>
  readonly element?: z.ZodType<unknown>
  readonly options?: readonly z.ZodType<unknown>[]
  readonly innerType?: z.ZodType<unknown>
  readonly values?: readonly unknown[]
  readonly entries?: Readonly<Record<string, unknown>>
  readonly getter?: () => z.ZodType<unknown>
  readonly keyType?: z.ZodType<unknown>
  readonly valueType?: z.ZodType<unknown>
  readonly items?: readonly z.ZodType<unknown>[]
  readonly rest?: z.ZodType<unknown> | null
}

export interface CheckLike {
  readonly _zod: {
    readonly def: { readonly when?: (payload: Payload) => boolean }
    readonly check: (payload: Payload) => unknown
  }
}

interface Payload {
  value: unknown
  issues: unknown[]
}

export const defOf = (schema: z.ZodType<unknown>): Def =>
  (schema as unknown as { _zod: { def: Def } })._zod.def

const compiled = new WeakMap<object, SchemaCheck>()

/** The check of `schema` (compiled once per schema object). */
export function compileCheck(schema: z.ZodType<unknown>): SchemaCheck {
  const cached = compiled.get(schema)
  if (cached) return cached
  const check = defOf(schema).type === 'object' ? generated(schema) : build(schema)
  compiled.set(schema, check)
  return check
}

/** An object schema's generated check; the closures where code cannot be generated (no `eval`). */
function generated(schema: z.ZodType<unknown>): SchemaCheck {
  try {
    return generateCheck(schema)
  } catch (error) {
    if (error instanceof EvalError) return build(schema)
    throw error
  }
}

/**
 * Why `value` does not match `schema`: `undefined` when it does (decided by the compiled
 * check, which allocates nothing), else zod's issues — `safeParse` runs only to word a
 * refusal. The check is compiled on first use.
 */
export function schemaIssues(schema: z.ZodType<unknown>, value: unknown): z.core.$ZodIssue[] | undefined {
  if (compileCheck(schema)(value)) return undefined
  const result = schema.safeParse(value)
  return result.success ? undefined : result.error.issues
}

/** One reused payload for zod's own refinement checks (they push an issue only on failure). */
const payload: Payload = { value: undefined, issues: [] }

/** A common numeric check as a plain comparison: `@integer`, or a bound (`@minimum`, `@maximum`). */
export type NativeComparison =
  | { readonly kind: 'safeint' }
  | { readonly kind: 'bound'; readonly op: '>=' | '>' | '<=' | '<'; readonly bound: number }

/** What {@link nativeCheck} and the generated checks compare for `check`; `undefined` for any other check. */
export function nativeComparison(check: CheckLike): NativeComparison | undefined {
  const def = check._zod.def as { check?: string; format?: string; value?: unknown; inclusive?: boolean }
  if (def.check === 'number_format' && def.format === 'safeint') return { kind: 'safeint' }
  if (typeof def.value !== 'number') return undefined
  if (def.check === 'greater_than') return { kind: 'bound', op: def.inclusive ? '>=' : '>', bound: def.value }
  if (def.check === 'less_than') return { kind: 'bound', op: def.inclusive ? '<=' : '<', bound: def.value }
  return undefined
}

/**
 * The common numeric checks (`@integer`, `@minimum`, `@maximum`), compiled to plain
 * comparisons; `undefined` for any other check, which runs through zod's own.
 */
function nativeCheck(check: CheckLike): SchemaCheck | undefined {
  const native = nativeComparison(check)
  if (native === undefined) return undefined
  if (native.kind === 'safeint') return (v) => Number.isSafeInteger(v)
  const { op, bound } = native
  if (op === '>=') return (v) => (v as number) >= bound
  if (op === '>') return (v) => (v as number) > bound
  if (op === '<=') return (v) => (v as number) <= bound
  return (v) => (v as number) < bound
}

export function withChecks(base: SchemaCheck, checks: readonly CheckLike[] | undefined): SchemaCheck {
  if (!checks || checks.length === 0) return base
  const natives = checks.map(nativeCheck)
  if (natives.every((n) => n !== undefined)) {
    const all = natives as SchemaCheck[]
    if (all.length === 1) {
      const only = all[0]!
      return (value) => base(value) && only(value)
    }
    return (value) => {
      if (!base(value)) return false
      for (const check of all) if (!check(value)) return false
      return true
    }
  }
  return (value) => {
    if (!base(value)) return false
    for (let i = 0; i < checks.length; i++) {
      const native = natives[i]
      if (native !== undefined) {
        if (!native(value)) return false
        continue
      }
      const check = checks[i]!
      payload.value = value
      const when = check._zod.def.when
      if (when && !when(payload)) continue
      const result = check._zod.check(payload)
      if (result instanceof Promise)
        throw new TypeError('asynchronous refinements are not supported in event schemas')
      // issues are only ever pushed by a failing check, and emptied right after
      if (payload.issues.length > 0) {
        payload.issues.length = 0
        return false
      }
    }
    return true
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

function build(schema: z.ZodType<unknown>): SchemaCheck {
  const def = defOf(schema)
  switch (def.type) {
    case 'string':
      return withChecks((v) => typeof v === 'string', def.checks)
    case 'number': {
      // a format schema (`z.int()`, `z.int32()`, …) is its own first refinement, as zod runs it
      const own = (def as { readonly check?: string }).check === 'number_format'
      const checks = own ? [schema as unknown as CheckLike, ...(def.checks ?? [])] : def.checks
      return withChecks((v) => typeof v === 'number' && Number.isFinite(v), checks)
    }
    case 'boolean':
      return withChecks((v) => typeof v === 'boolean', def.checks)
    case 'null':
      return (v) => v === null
    case 'unknown':
    case 'any':
      return withChecks(() => true, def.checks)
    case 'literal': {
      const values = def.values!
      return values.length === 1 ? (v) => v === values[0] : (v) => values.includes(v)
    }
    case 'enum': {
      const values = new Set(Object.values(def.entries!))
      return withChecks((v) => values.has(v), def.checks)
    }
    case 'optional': {
      const inner = compileCheck(def.innerType!)
      return (v) => v === undefined || inner(v)
    }
    case 'nullable': {
      const inner = compileCheck(def.innerType!)
      return (v) => v === null || inner(v)
    }
    case 'lazy': {
      let inner: SchemaCheck | undefined
      return (v) => {
        inner ??= compileCheck(def.getter!())
        return inner(v)
      }
    }
    case 'array': {
      const elementDef = defOf(def.element!)
      if ((elementDef.type === 'unknown' || elementDef.type === 'any') && !elementDef.checks?.length) {
        // any element passes: no call per element (a checkpoint holds thousands of events)
        return withChecks((v) => Array.isArray(v), def.checks)
      }
      const element = compileCheck(def.element!)
      return withChecks((v) => {
        if (!Array.isArray(v)) return false
        for (let i = 0; i < v.length; i++) if (!element(v[i])) return false
        return true
      }, def.checks)
    }
    case 'tuple':
      return withChecks(tupleCheck(def), def.checks)
    case 'union': {
      const options = def.options!.map((o) => compileCheck(o))
      return withChecks((v) => {
        for (const option of options) if (option(v)) return true
        return false
      }, def.checks)
    }
    case 'object':
      return withChecks(objectCheck(def), def.checks)
    case 'record': {
      const key = compileCheck(def.keyType!)
      const value = compileCheck(def.valueType!)
      return withChecks((v) => {
        if (!isObject(v)) return false
        for (const k in v) if (!key(k) || !value(v[k])) return false
        return true
      }, def.checks)
    }
    default:
      // Anything else (transforms, defaults, pipes, dates…): zod itself, allocating.
      return (v) => schema.safeParse(v).success
  }
}

function tupleCheck(def: Def): SchemaCheck {
  const items = def.items!.map((i) => compileCheck(i))
  const rest = def.rest ? compileCheck(def.rest) : undefined
  const optionalFrom = def.items!.findIndex((_, i) =>
    def.items!.slice(i).every((item) => defOf(item).type === 'optional'),
  )
  const minimum = optionalFrom === -1 ? items.length : optionalFrom
  return (v) => {
    if (!Array.isArray(v) || v.length < minimum) return false
    if (!rest && v.length > items.length) return false
    for (let i = 0; i < v.length; i++) {
      const check = i < items.length ? items[i]! : rest!
      if (!check(v[i])) return false
    }
    return true
  }
}

function objectCheck(def: Def): SchemaCheck {
  const shape = def.shape!
  const keys = Object.keys(shape)
  const checks = keys.map((k) => compileCheck(shape[k]!))
  const optional = keys.map((k) => defOf(shape[k]!).type === 'optional')
  const known = new Set(keys)
  const catchallType = def.catchall ? defOf(def.catchall).type : undefined
  const strict = catchallType === 'never'
  const catchall = def.catchall && !strict ? compileCheck(def.catchall) : undefined
  return (v) => {
    if (!isObject(v)) return false
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!
      const value = v[key]
      if (value === undefined && !(key in v)) {
        if (!optional[i]) return false
        continue
      }
      if (!checks[i]!(value)) return false
    }
    if (strict) {
      for (const key in v) if (!known.has(key)) return false
    } else if (catchall) {
      for (const key in v) if (!known.has(key) && !catchall(v[key])) return false
    }
    return true
  }
}
