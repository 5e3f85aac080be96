import { KeelError } from './errors.js'

/** Any value that survives `JSON.stringify` → `JSON.parse` unchanged. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue }

/** A JSON object. */
export type JsonObject = { [key: string]: JsonValue }

/** Thrown when a value that must be plain JSON is not. `details.path` is the JSON path. */
export class NonJsonValueError extends KeelError<'NON_JSON_DATA'> {}

/**
 * Returns a deep-frozen copy of `value` that is plain JSON, or throws
 * {@link NonJsonValueError} naming the first offending JSON path (`root.a[2].b`).
 *
 * Refused: `undefined` (as a value or property value), `NaN`, `±Infinity`, bigint,
 * functions, symbols, class instances (Date, Map, Set, …), arrays with holes, and cycles.
 * Symbol-keyed properties are not data and are left out, exactly as `JSON.stringify`
 * does. One pass: check, copy and freeze together (this is on the append hot path).
 */
export function toFrozenJson<T>(value: T, root = 'data', what = 'value'): T {
  const copy = fastCopy(value, [], 0)
  if (copy !== INVALID) return copy as T
  // Slow path, only on failure: find the first offending path for the message.
  const { at, reason } = diagnose(value, root, [])!
  throw new NonJsonValueError('NON_JSON_DATA', `${what}: ${at} is ${reason}; only plain JSON may be stored`, {
    path: at,
    reason,
  })
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
    copy[key] = item
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

function diagnose(v: unknown, at: string, path: object[]): { at: string; reason: string } | undefined {
  const kind = typeof v
  if (kind === 'string' || kind === 'boolean' || v === null) return undefined
  if (kind === 'number') return Number.isFinite(v as number) ? undefined : { at, reason: describe(v) }
  if (kind !== 'object') return { at, reason: describe(v) }
  const obj = v as object
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
      const found = diagnose((obj as Record<string, unknown>)[key], `${at}.${key}`, path)
      if (found) return found
    }
    return undefined
  } finally {
    path.pop()
  }
}

/** Deep-freezes a value that is already known to be plain JSON (e.g. just parsed). */
export function deepFreezeJson<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const key in value) deepFreezeJson((value as Record<string, unknown>)[key])
    Object.freeze(value)
  }
  return value
}
