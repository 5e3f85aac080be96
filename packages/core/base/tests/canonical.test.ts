import { canonicalJson } from '@keel/base'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

/** The same value with every object's keys in reverse order. */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys)
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(
      Object.entries(value)
        .reverse()
        .map(([k, v]) => [k, reversedKeys(v)]),
    )
  return value
}

describe('canonicalJson', () => {
  it('parses back to the value, and does not depend on key order', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        const text = canonicalJson(value)
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)))
        expect(canonicalJson(reversedKeys(value))).toBe(text)
      }),
    )
  })

  it('sorts keys, drops undefined properties and writes other undefined as null, like JSON.stringify', () => {
    expect(canonicalJson({ b: 1, a: [undefined, { d: undefined, c: 'x' }] })).toBe(
      '{"a":[null,{"c":"x"}],"b":1}',
    )
    expect(canonicalJson(undefined)).toBe('null')
  })
})
