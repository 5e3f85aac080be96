import type { z } from 'zod'
import {
  type CheckLike,
  compileCheck,
  type Def,
  defOf,
  nativeComparison,
  type SchemaCheck,
  withChecks,
} from './schema-check.js'

/**
 * The check of an object schema as one generated function: the same decisions as the
 * closures `compileCheck` builds (this is their inlined form, mirror for mirror), with
 * each property read at a constant key and each type test in line. Under load the
 * closure tree of a large event (an assistant message: some thirty closures, their keys
 * and sets) is cold by the time the next event of its type comes, and a check cost
 * ten times what it costs warm; one function touches far less memory. Parts it does not
 * inline (records, tuples, lazy schemas, zod's own refinements) call their compiled
 * check. Compiled once per schema, from the schema's definition only (never from data).
 */
export function generateCheck(schema: z.ZodType<unknown>): SchemaCheck {
  const gen = new Generator()
  const body = gen.emit(schema, 'v0', 'return false')
  const source = `return function check(v0) {\n${body}\nreturn true\n}`
  return new Function('K', source)(gen.constants) as SchemaCheck
}

class Generator {
  readonly constants: unknown[] = []
  #names = 0

  #name(prefix: string): string {
    return `${prefix}${++this.#names}`
  }

  /** A constant the generated code reads as `K[i]`. */
  #constant(value: unknown): string {
    this.constants.push(value)
    return `K[${this.constants.length - 1}]`
  }

  /** Statements that run `fail` when `v` (a variable name) does not match `schema`. */
  emit(schema: z.ZodType<unknown>, v: string, fail: string): string {
    const def = defOf(schema)
    switch (def.type) {
      case 'string':
        return `if (typeof ${v} !== 'string') ${fail}\n${this.#checks(def.checks, v, fail, true)}`
      case 'number': {
        const own = (def as { readonly check?: string }).check === 'number_format'
        const checks = own ? [schema as unknown as CheckLike, ...(def.checks ?? [])] : def.checks
        return `if (typeof ${v} !== 'number' || !Number.isFinite(${v})) ${fail}\n${this.#checks(checks, v, fail)}`
      }
      case 'boolean':
        return `if (typeof ${v} !== 'boolean') ${fail}\n${this.#checks(def.checks, v, fail)}`
      case 'null':
        return `if (${v} !== null) ${fail}`
      case 'unknown':
      case 'any':
        return this.#checks(def.checks, v, fail)
      case 'literal': {
        const values = def.values!
        if (values.length === 1) return `if (${v} !== ${this.#literal(values[0])}) ${fail}`
        return `if (!${this.#constant(values)}.includes(${v})) ${fail}`
      }
      case 'enum': {
        const values = this.#constant(new Set(Object.values(def.entries!)))
        return `if (!${values}.has(${v})) ${fail}\n${this.#checks(def.checks, v, fail)}`
      }
      case 'optional':
        return `if (${v} !== undefined) {\n${this.emit(def.innerType!, v, fail)}\n}`
      case 'nullable':
        return `if (${v} !== null) {\n${this.emit(def.innerType!, v, fail)}\n}`
      case 'array':
        return this.#array(def, v, fail)
      case 'union':
        return this.#union(def, v, fail)
      case 'object':
        return this.#object(def, v, fail)
      default:
        return `if (!${this.#constant(compileCheck(schema))}(${v})) ${fail}`
    }
  }

  /** A literal as code: strings, finite numbers, booleans and null inline; anything else a constant. */
  #literal(value: unknown): string {
    if (typeof value === 'string' || typeof value === 'boolean' || value === null)
      return JSON.stringify(value)
    if (typeof value === 'number' && Number.isFinite(value) && !Object.is(value, -0)) return String(value)
    return this.#constant(value)
  }

  /** The refinements: the common numeric ones in line, any other through zod's own check. */
  #checks(checks: readonly CheckLike[] | undefined, v: string, fail: string, string = false): string {
    if (!checks || checks.length === 0) return ''
    const out: string[] = []
    const others: CheckLike[] = []
    for (const check of checks) {
      if (string && isNonEmpty(check)) {
        out.push(`if (${v}.length === 0) ${fail}`)
        continue
      }
      const inline = inlineCheck(check, v)
      if (inline !== undefined) out.push(`if (!(${inline})) ${fail}`)
      else others.push(check)
    }
    if (others.length > 0) out.push(`if (!${this.#constant(withChecks(() => true, others))}(${v})) ${fail}`)
    return out.join('\n')
  }

  #array(def: Def, v: string, fail: string): string {
    const head = `if (!Array.isArray(${v})) ${fail}`
    const elementDef = defOf(def.element!)
    const checks = this.#checks(def.checks, v, fail)
    if ((elementDef.type === 'unknown' || elementDef.type === 'any') && !elementDef.checks?.length)
      return `${head}\n${checks}`
    const i = this.#name('i')
    const e = this.#name('e')
    const loop = `for (let ${i} = 0; ${i} < ${v}.length; ${i}++) {\nconst ${e} = ${v}[${i}]\n${this.emit(def.element!, e, fail)}\n}`
    return `${head}\n${loop}\n${checks}`
  }

  /** The first option that matches wins: each option a labelled block its failure breaks out of. */
  #union(def: Def, v: string, fail: string): string {
    const done = this.#name('u')
    const options = def.options!.map((option) => {
      const label = this.#name('o')
      return `${label}: {\n${this.emit(option, v, `break ${label}`)}\nbreak ${done}\n}`
    })
    return `${done}: {\n${options.join('\n')}\n${fail}\n}\n${this.#checks(def.checks, v, fail)}`
  }

  #object(def: Def, v: string, fail: string): string {
    const shape = def.shape!
    const keys = Object.keys(shape)
    const out = [`if (typeof ${v} !== 'object' || ${v} === null || Array.isArray(${v})) ${fail}`]
    for (const key of keys) {
      const p = this.#name('p')
      const k = JSON.stringify(key)
      const optional = defOf(shape[key]!).type === 'optional'
      out.push(
        `const ${p} = ${v}[${k}]`,
        `if (${p} === undefined && !(${k} in ${v})) {${optional ? '' : ` ${fail}`}} else {\n${this.emit(shape[key]!, p, fail)}\n}`,
      )
    }
    const catchallType = def.catchall ? defOf(def.catchall).type : undefined
    const key = this.#name('k')
    const known = this.#constant(new Set(keys))
    if (catchallType === 'never') out.push(`for (const ${key} in ${v}) if (!${known}.has(${key})) ${fail}`)
    else if (def.catchall) {
      const catchall = this.#constant(compileCheck(def.catchall))
      out.push(`for (const ${key} in ${v}) if (!${known}.has(${key}) && !${catchall}(${v}[${key}])) ${fail}`)
    }
    const checks = this.#checks(def.checks, v, fail)
    if (checks !== '') out.push(checks)
    return out.join('\n')
  }
}

/**
 * Whether `check` is `.min(1)` on a string. zod measures a string's length in code points
 * when its UTF-16 length is at least the minimum and below twice it; at a minimum of 1 that
 * is exactly "not empty".
 */
function isNonEmpty(check: CheckLike): boolean {
  const def = check._zod.def as { check?: string; minimum?: unknown; when?: unknown }
  return def.check === 'min_length' && def.minimum === 1
}

/** The code of the comparison {@link nativeComparison} describes for `check`, or undefined. */
function inlineCheck(check: CheckLike, v: string): string | undefined {
  const native = nativeComparison(check)
  if (native === undefined) return undefined
  if (native.kind === 'safeint') return `Number.isSafeInteger(${v})`
  if (!Number.isFinite(native.bound)) return undefined
  return `${v} ${native.op} ${native.bound}`
}
