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
 * functions, symbols, class instances (Date, Map, Set, …), arrays with holes or extra
 * properties, symbol keys, and cycles. One pass: check, copy and freeze together.
 */
export function toFrozenJson<T>(value: T, root = 'data', what = 'value'): T {
  const seen = new Set<object>()
  const fail = (path: string, reason: string): never => {
    throw new NonJsonValueError('NON_JSON_DATA', `${what}: ${path} is ${reason}; only plain JSON may be stored`, {
      path,
      reason,
    })
  }
  const visit = (v: unknown, path: string): unknown => {
    switch (typeof v) {
      case 'string':
      case 'boolean':
        return v
      case 'number':
        if (!Number.isFinite(v)) fail(path, String(v))
        return v
      case 'undefined':
        return fail(path, 'undefined')
      case 'bigint':
        return fail(path, 'a bigint')
      case 'function':
        return fail(path, 'a function')
      case 'symbol':
        return fail(path, 'a symbol')
    }
    if (v === null) return null
    const obj = v as object
    if (seen.has(obj)) fail(path, 'a cycle (an object that contains itself)')
    seen.add(obj)
    let out: unknown
    if (Array.isArray(obj)) {
      const arr = obj as unknown[]
      const copy = new Array<unknown>(arr.length)
      for (let i = 0; i < arr.length; i++) {
        if (!(i in arr)) fail(`${path}[${i}]`, 'a hole in an array')
        copy[i] = visit(arr[i], `${path}[${i}]`)
      }
      out = Object.freeze(copy)
    } else {
      const proto = Object.getPrototypeOf(obj)
      if (proto !== Object.prototype && proto !== null) {
        fail(path, `an instance of ${(obj as { constructor?: { name?: string } }).constructor?.name ?? 'a class'}`)
      }
      if (Object.getOwnPropertySymbols(obj).length > 0) fail(path, 'an object with symbol keys')
      const copy: Record<string, unknown> = {}
      for (const key in obj) {
        copy[key] = visit((obj as Record<string, unknown>)[key], `${path}.${key}`)
      }
      out = Object.freeze(copy)
    }
    seen.delete(obj)
    return out
  }
  return visit(value, root) as T
}

/** Deep-freezes a value that is already known to be plain JSON (e.g. just parsed). */
export function deepFreezeJson<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const key in value) deepFreezeJson((value as Record<string, unknown>)[key])
    Object.freeze(value)
  }
  return value
}
