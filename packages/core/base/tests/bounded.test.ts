import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  boundIssues,
  elide,
  formatJsonPath,
  MAX_ERROR_ISSUES,
  MAX_ERROR_KEY_CHARS,
  previewJson,
  toFrozenJson,
} from '../src/index.js'

/** Whether `text` holds a lone surrogate (a split pair). */
const wellFormed = (text: string) =>
  !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text)

describe('elide', () => {
  it('keeps short text as is and bounds long text, keeping head and tail and never splitting a pair', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 400 }),
        fc.integer({ min: 2, max: 120 }),
        (text, max) => {
          const out = elide(text, max)
          if (text.length <= max) return out === text
          const marker = out.match(/…\[([\d,]+) characters elided\]…/)
          expect(marker).not.toBeNull()
          const [head, tail] = out.split(marker![0])
          expect(text.startsWith(head!)).toBe(true)
          expect(text.endsWith(tail!)).toBe(true)
          expect(head!.length + tail!.length + Number(marker![1]!.replaceAll(',', ''))).toBe(text.length)
          expect(head!.length + tail!.length).toBeLessThanOrEqual(max)
          expect(wellFormed(out)).toBe(wellFormed(text))
          return true
        },
      ),
    )
  })

  it('a megabyte becomes a few hundred characters', () => {
    const out = elide('x'.repeat(1 << 20))
    expect(out.length).toBeLessThan(300)
    expect(out).toContain('1,048,336 characters elided')
  })
})

describe('formatJsonPath and previewJson', () => {
  it('elides each long key of a path', () => {
    const path = formatJsonPath(['message', 'k'.repeat(1 << 20), 3, 'x'], 'data')
    expect(path.startsWith('data.message.kkk')).toBe(true)
    expect(path.endsWith('[3].x')).toBe(true)
    expect(path.length).toBeLessThan(MAX_ERROR_KEY_CHARS + 60)
    expect(formatJsonPath([0, 'a'])).toBe('[0].a')
    expect(formatJsonPath([], '(arguments)')).toBe('(arguments)')
  })

  it('quotes a key that is not an identifier, elided inside the quotes', () => {
    expect(formatJsonPath(['mcpServers', 'my server', 'env', 'a.b'], '$')).toBe(
      '$.mcpServers["my server"].env["a.b"]',
    )
    expect(formatJsonPath(['x-y', 0])).toBe('["x-y"][0]')
    const path = formatJsonPath(['config', `${'.'.repeat(1 << 20)}`], '$')
    expect(path.startsWith('$.config["...')).toBe(true)
    expect(path.endsWith('..."]')).toBe(true)
    expect(path).toContain('characters elided')
    expect(path.length).toBeLessThan(MAX_ERROR_KEY_CHARS + 60)
  })

  it('previews any value in bounded space without stringifying it whole', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 10, max: 300 }), (value, max) => {
        const out = previewJson(value, max)
        expect(out.length).toBeLessThanOrEqual(max + 260)
        const whole = JSON.stringify(value)
        // small values whose strings need no eliding are exactly their JSON
        if (whole.length <= max && !/"[^"]{240,}"/.test(whole)) expect(out).toBe(whole)
      }),
    )
    const huge = { [('k' as string).repeat(1 << 20)]: 'v'.repeat(1 << 20), more: Array(1e5).fill(1) }
    expect(previewJson(huge).length).toBeLessThan(600)
    expect(previewJson(undefined)).toBe('undefined')
    expect(previewJson(1n)).toBe('<bigint>')
  })
})

describe('boundIssues', () => {
  it('lists at most MAX_ERROR_ISSUES issues, each bounded, and counts the rest', () => {
    const issues = Array.from({ length: 50 }, (_, i) => ({
      path: ['k'.repeat(10_000), i],
      message: `bad ${'m'.repeat(10_000)}`,
    }))
    const { issues: shown, more } = boundIssues(issues, 'data')
    expect(shown).toHaveLength(MAX_ERROR_ISSUES)
    expect(more).toBe(50 - MAX_ERROR_ISSUES)
    for (const issue of shown) {
      expect(issue.path.length).toBeLessThan(200)
      expect(issue.message.length).toBeLessThan(400)
    }
  })

  it('rebuilds an unrecognized-keys message from its keys, each elided', () => {
    const keys = ['a', 'b'.repeat(1 << 20), 'c']
    const [issue] = boundIssues([
      { path: [], code: 'unrecognized_keys', keys, message: `Unrecognized keys: ${keys.join()}` },
    ]).issues
    expect(issue!.message.startsWith('Unrecognized keys: "a", "bbb')).toBe(true)
    expect(issue!.message.endsWith('bbb", "c"')).toBe(true)
    expect(issue!.message.length).toBeLessThan(200)
  })
})

it('NON_JSON_DATA names a path through a megabyte key in bounded space', () => {
  const value = { ['k'.repeat(1 << 20)]: { bad: () => 1 } }
  let message = ''
  try {
    toFrozenJson(value)
  } catch (error) {
    message = (error as Error).message
  }
  expect(message).toContain('.bad is a function')
  expect(message.length).toBeLessThan(300)
})
