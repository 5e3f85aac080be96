import {
  deepFreezeJson,
  freezeParsedJson,
  isKeelError,
  KeelError,
  MAX_JSON_DEPTH,
  NonJsonValueError,
  toFrozenJson,
} from '@keel/base'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

function failure(value: unknown): NonJsonValueError {
  try {
    toFrozenJson(value, 'data', 'test')
  } catch (error) {
    expect(error).toBeInstanceOf(NonJsonValueError)
    return error as NonJsonValueError
  }
  throw new Error('expected a failure')
}

describe('toFrozenJson', () => {
  it('returns a deep-frozen copy equal to the input for any JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const copy = toFrozenJson(value)
        expect(copy).toEqual(value)
        if (value !== null && typeof value === 'object') {
          expect(copy).not.toBe(value)
          expect(Object.isFrozen(copy)).toBe(true)
        }
        // JSON round trip is the identity on what it accepts (-0 aside, which JSON turns into 0)
        expect(JSON.parse(JSON.stringify(copy))).toEqual(JSON.parse(JSON.stringify(value)))
      }),
    )
  })

  it.each([
    [{ a: undefined }, 'data.a', 'undefined'],
    [{ a: [1, Number.NaN] }, 'data.a[1]', 'NaN'],
    [{ a: { b: Number.NEGATIVE_INFINITY } }, 'data.a.b', '-Infinity'],
    [{ f: () => 0 }, 'data.f', 'a function'],
    [{ d: new Date(0) }, 'data.d', 'an instance of Date'],
    [{ s: new Set() }, 'data.s', 'an instance of Set'],
    [{ n: 1n }, 'data.n', 'a bigint'],
    [{ y: Symbol('y') }, 'data.y', 'a symbol'],
    // biome-ignore lint/suspicious/noSparseArray: the hole is the point
    [{ h: [1, , 3] }, 'data.h[1]', 'a hole in an array'],
  ])('refuses %o at %s', (value, path, reason) => {
    const error = failure(value)
    expect(error.code).toBe('NON_JSON_DATA')
    expect(error.details).toMatchObject({ path, reason })
    expect(error.message).toContain(path)
  })

  it('refuses a cycle but accepts a shared (acyclic) object twice', () => {
    const shared = { x: 1 }
    expect(toFrozenJson({ a: shared, b: shared })).toEqual({ a: { x: 1 }, b: { x: 1 } })
    const cyclic: Record<string, unknown> = { a: 1 }
    cyclic.self = { back: cyclic }
    expect(failure(cyclic).details.path).toBe('data.self.back')
  })

  it('accepts null-prototype objects and leaves symbol keys out, as JSON.stringify does', () => {
    const bare = Object.create(null) as Record<string, unknown>
    bare.k = 'v'
    expect(toFrozenJson(bare)).toEqual({ k: 'v' })
    expect(toFrozenJson({ a: 1, [Symbol('s')]: 2 })).toEqual({ a: 1 })
  })

  it('deepFreezeJson freezes in place', () => {
    const v = { a: [{ b: 1 }] }
    deepFreezeJson(v)
    expect(Object.isFrozen(v.a[0])).toBe(true)
  })
})

describe('KeelError', () => {
  it('carries a stable code, frozen details and the subclass name', () => {
    class DemoError extends KeelError<'DEMO'> {}
    const error = new DemoError('DEMO', 'demo failed at x', { where: 'x' })
    expect(error.name).toBe('DemoError')
    expect(isKeelError(error, 'DEMO')).toBe(true)
    expect(isKeelError(error, 'OTHER')).toBe(false)
    expect(Object.isFrozen(error.details)).toBe(true)
  })
})

describe('depth limit and __proto__ keys', () => {
  const nested = (depth: number): unknown => {
    let value: unknown = 1
    for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { k: value }
    return value
  }

  it(`accepts ${MAX_JSON_DEPTH} levels of nesting and refuses deeper data with a typed error, never a RangeError`, () => {
    expect(() => toFrozenJson(nested(MAX_JSON_DEPTH))).not.toThrow()
    for (const depth of [MAX_JSON_DEPTH + 1, 3000, 20_000]) {
      const error = (() => {
        try {
          toFrozenJson(nested(depth), 'data', 'test')
        } catch (e) {
          return e
        }
      })()
      expect(error).toBeInstanceOf(NonJsonValueError)
      expect((error as Error).message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`)
    }
    const parsed = JSON.parse(`${'['.repeat(20_000)}1${']'.repeat(20_000)}`)
    expect(() => deepFreezeJson(parsed, 'data', 'stored')).toThrow(NonJsonValueError)
    expect(() => deepFreezeJson(JSON.parse(JSON.stringify(nested(MAX_JSON_DEPTH))))).not.toThrow()
  })

  it('freezeParsedJson freezes every object of a parse, and says false past the depth limit', () => {
    const parsed = JSON.parse('{"a":[{"b":[1,{"c":null}]},"s"],"d":{"e":{}}}')
    expect(freezeParsedJson(parsed)).toBe(true)
    const objects: object[] = []
    const walk = (v: unknown): void => {
      if (v !== null && typeof v === 'object') {
        objects.push(v)
        for (const item of Object.values(v)) walk(item)
      }
    }
    walk(parsed)
    expect(objects).toHaveLength(7)
    expect(objects.every((o) => Object.isFrozen(o))).toBe(true)
    expect(() => (parsed.a[0].b as unknown[]).push(2)).toThrow(TypeError)
    expect(freezeParsedJson(1)).toBe(true)
    expect(freezeParsedJson(null)).toBe(true)
    expect(freezeParsedJson(JSON.parse(JSON.stringify(nested(MAX_JSON_DEPTH))))).toBe(true)
    expect(freezeParsedJson(JSON.parse(JSON.stringify(nested(MAX_JSON_DEPTH + 1))))).toBe(false)
    expect(freezeParsedJson(JSON.parse(`${'['.repeat(20_000)}1${']'.repeat(20_000)}`))).toBe(false)
  })

  it('keeps an own __proto__ key as data and never sets a prototype', () => {
    const parsed = JSON.parse('{"__proto__":{"polluted":1},"a":[{"__proto__":null}]}')
    const copy = toFrozenJson(parsed) as Record<string, unknown>
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(Object.keys(copy)).toEqual(['__proto__', 'a'])
    expect(JSON.stringify(copy)).toBe(JSON.stringify(parsed))
    expect(({} as { polluted?: number }).polluted).toBeUndefined()
    expect(JSON.stringify(deepFreezeJson(parsed))).toBe(
      '{"__proto__":{"polluted":1},"a":[{"__proto__":null}]}',
    )
  })
})
