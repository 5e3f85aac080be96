import { boundText, elide, MAX_ERROR_KEY_CHARS } from './bounded.js'
import { KeelError } from './errors.js'

/** Any value that survives `JSON.stringify` → `JSON.parse` unchanged. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue }

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue }

/**
 * The deepest nesting of arrays and objects plain JSON data may have (the value itself is
 * level 0). Deeper data is refused with {@link NonJsonValueError}, on append and on load
 * alike, before any recursive code could overflow the stack.
 */
export const MAX_JSON_DEPTH = 512

/** Thrown when a value that must be plain JSON is not. `details.path` is the JSON path. */
export class NonJsonValueError extends KeelError<'NON_JSON_DATA'> {}

/**
 * Returns a deep-frozen copy of `value` that is plain JSON, or throws
 * {@link NonJsonValueError} naming the first offending JSON path (`root.a[2].b`).
 *
 * Refused: `undefined` (as a value or property value), `NaN`, `±Infinity`, bigint,
 * functions, symbols, class instances (Date, Map, Set, …), arrays with holes, cycles and
 * nesting deeper than {@link MAX_JSON_DEPTH}. Symbol-keyed properties are not data and are
 * left out, exactly as `JSON.stringify` does. An own `__proto__` key (as `JSON.parse`
 * makes one) is kept as data, never turned into a prototype. One pass: check, copy and freeze together (this is on the append hot path).
 */
export function toFrozenJson<T>(value: T, root = 'data', what = 'value'): T {
  const copy = fastCopy(value, [], 0)
  if (copy !== INVALID) return copy as T
  // Slow path, only on failure: find the first offending path for the message.
  const { at, reason } = diagnose(value, root, [])!
  const path = boundText(at, 1_000)
  throw new NonJsonValueError(
    'NON_JSON_DATA',
    `${what}: ${path} is ${reason}; only plain JSON may be stored`,
    {
      path,
      reason,
    },
  )
}

const INVALID = Symbol('invalid')

/** Check + copy + freeze without any path bookkeeping; returns INVALID on the first problem. */
function fastCopy(v: unknown, path: object[], depth: number): unknown {
  const kind = typeof v
  if (kind === 'string' || kind === 'boolean') return v
  if (kind === 'number') return Number.isFinite(v as number) ? v : INVALID
  if (v === null) return null
  if (kind !== 'object') return INVALID
  const obj = v as object
  if (depth >= MAX_JSON_DEPTH) return INVALID
  for (let i = 0; i < depth; i++) if (path[i] === obj) return INVALID
  path[depth] = obj
  if (Array.isArray(obj)) {
    const n = obj.length
    const copy = new Array<unknown>(n)
    for (let i = 0; i < n; i++) {
      if (!(i in obj)) return INVALID
      const item = fastCopy(obj[i], path, depth + 1)
      if (item === INVALID) return INVALID
      copy[i] = item
    }
    return Object.freeze(copy)
  }
  const proto = Object.getPrototypeOf(obj)
  if (proto !== Object.prototype && proto !== null) return INVALID
  const copy: Record<string, unknown> = {}
  for (const key in obj) {
    const item = fastCopy((obj as Record<string, unknown>)[key], path, depth + 1)
    if (item === INVALID) return INVALID
    if (key === '__proto__') defineOwn(copy, key, item)
    else copy[key] = item
  }
  return Object.freeze(copy)
}

function describe(v: unknown): string {
  switch (typeof v) {
    case 'number':
      return String(v)
    case 'undefined':
      return 'undefined'
    case 'bigint':
      return 'a bigint'
    case 'function':
      return 'a function'
    case 'symbol':
      return 'a symbol'
    default:
      return `an instance of ${(v as { constructor?: { name?: string } }).constructor?.name ?? 'a class'}`
  }
}

/** Sets an own enumerable data property (for `__proto__`, which plain assignment would not). */
function defineOwn(target: object, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
}

const tooDeep = `nested deeper than ${MAX_JSON_DEPTH} levels (the documented limit for stored data)`

function diagnose(v: unknown, at: string, path: object[]): { at: string; reason: string } | undefined {
  const kind = typeof v
  if (kind === 'string' || kind === 'boolean' || v === null) return undefined
  if (kind === 'number') return Number.isFinite(v as number) ? undefined : { at, reason: describe(v) }
  if (kind !== 'object') return { at, reason: describe(v) }
  const obj = v as object
  if (path.length >= MAX_JSON_DEPTH) return { at, reason: tooDeep }
  if (path.includes(obj)) return { at, reason: 'a cycle (an object that contains itself)' }
  path.push(obj)
  try {
    if (Array.isArray(obj)) {
      for (let i = 0; i < obj.length; i++) {
        if (!(i in obj)) return { at: `${at}[${i}]`, reason: 'a hole in an array' }
        const found = diagnose(obj[i], `${at}[${i}]`, path)
        if (found) return found
      }
      return undefined
    }
    const proto = Object.getPrototypeOf(obj)
    if (proto !== Object.prototype && proto !== null) return { at, reason: describe(obj) }
    for (const key in obj) {
      const found = diagnose(
        (obj as Record<string, unknown>)[key],
        `${at}.${elide(key, MAX_ERROR_KEY_CHARS)}`,
        path,
      )
      if (found) return found
    }
    return undefined
  } finally {
    path.pop()
  }
}

/**
 * Deep-freezes a value that is already known to be plain JSON (e.g. just parsed). Throws
 * {@link NonJsonValueError} when it is nested deeper than {@link MAX_JSON_DEPTH}.
 */
export function deepFreezeJson<T>(value: T, root = 'data', what = 'value'): T {
  if (!freezeTo(value, MAX_JSON_DEPTH)) {
    throw new NonJsonValueError(
      'NON_JSON_DATA',
      `${what}: ${root} is ${tooDeep}; only plain JSON may be stored`,
      {
        path: root,
        reason: tooDeep,
      },
    )
  }
  return value
}

/**
 * Freezes `value` and everything in it, `levels` deep at most (false past that, part of it
 * left unfrozen). A `fresh` value (straight from `JSON.parse`, held by nobody else) holds
 * nothing frozen yet, so its objects are not asked; otherwise a frozen object is taken as
 * frozen throughout.
 */
function freezeTo(value: unknown, levels: number, fresh = false): boolean {
  if (value === null || typeof value !== 'object' || (!fresh && Object.isFrozen(value))) return true
  if (levels === 0) return false
  if (Array.isArray(value)) {
    // by index: `for…in` over an array makes a string per index
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i]
      if (item !== null && typeof item === 'object' && !freezeTo(item, levels - 1, fresh)) return false
    }
  } else {
    for (const key in value) {
      const item = (value as Record<string, unknown>)[key]
      if (item !== null && typeof item === 'object' && !freezeTo(item, levels - 1, fresh)) return false
    }
  }
  Object.freeze(value)
  return true
}

/**
 * Deep-freezes a value fresh from `JSON.parse` that nothing else holds yet, in one walk:
 * unlike {@link deepFreezeJson} it does not ask whether each object is frozen already
 * (nothing in a fresh parse is) and builds no message. Returns false, leaving part of it
 * unfrozen, when it is nested deeper than {@link MAX_JSON_DEPTH}; the caller then reports
 * it (e.g. through {@link deepFreezeJson}, which throws the error naming the value).
 */
export function freezeParsedJson(value: unknown): boolean {
  return freezeTo(value, MAX_JSON_DEPTH, true)
}

/**
 * Throws {@link NonJsonValueError} naming the first offending path when `value` is not
 * plain JSON (see {@link toFrozenJson} for what is refused). Copies and freezes nothing.
 */
export function assertPlainJson(value: unknown, root = 'value', what = 'value'): void {
  const found = diagnose(value, root, [])
  if (found) {
    throw new NonJsonValueError(
      'NON_JSON_DATA',
      `${what}: ${found.at} is ${found.reason}; only plain JSON may be stored`,
      { path: found.at, reason: found.reason },
    )
  }
}
