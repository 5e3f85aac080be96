import { describe, expect, it } from 'vitest'
import { isLoopback, mapFinishReason, mapUsage, retryAfterMs } from '../src/index.js'

describe('mapUsage', () => {
  it('reads DeepSeek cache fields', () => {
    expect(
      mapUsage({
        prompt_tokens: 10,
        completion_tokens: 5,
        total_tokens: 15,
        prompt_cache_hit_tokens: 8,
        prompt_cache_miss_tokens: 2,
        completion_tokens_details: { reasoning_tokens: 3 },
      }),
    ).toEqual({
      inputTokens: 10,
      outputTokens: 5,
      totalTokens: 15,
      cacheHitTokens: 8,
      cacheMissTokens: 2,
      reasoningTokens: 3,
    })
  })

  it("falls back to OpenAI's cached_tokens and derives the misses", () => {
    expect(
      mapUsage({ prompt_tokens: 10, completion_tokens: 5, prompt_tokens_details: { cached_tokens: 6 } }),
    ).toEqual({
      inputTokens: 10,
      outputTokens: 5,
      totalTokens: 15,
      cacheHitTokens: 6,
      cacheMissTokens: 4,
    })
  })

  it('leaves cache fields out when the server does not report them', () => {
    expect(mapUsage({ prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 })).toEqual({
      inputTokens: 1,
      outputTokens: 2,
      totalTokens: 3,
    })
  })
})

describe('retryAfterMs', () => {
  it('prefers retry-after-ms, then seconds, then an HTTP date; ignores garbage', () => {
    const now = Date.parse('2026-01-01T00:00:00Z')
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' }), now)).toBe(250)
    expect(retryAfterMs(new Headers({ 'retry-after': '1.5' }), now)).toBe(1500)
    expect(retryAfterMs(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' }), now)).toBe(30_000)
    expect(retryAfterMs(new Headers({ 'retry-after': 'Wed, 31 Dec 2025 00:00:00 GMT' }), now)).toBe(0)
    expect(retryAfterMs(new Headers({ 'retry-after': 'soon' }), now)).toBeUndefined()
    expect(retryAfterMs(new Headers(), now)).toBeUndefined()
    expect(retryAfterMs(undefined, now)).toBeUndefined()
  })
})

describe('mapFinishReason', () => {
  it('maps unknown reasons to other', () => {
    expect(mapFinishReason('tool_calls')).toBe('tool-calls')
    expect(mapFinishReason('eos')).toBe('other')
  })
})

describe('isLoopback', () => {
  it.each([
    ['http://127.0.0.1:8080', true],
    ['http://127.9.8.7', true],
    ['http://localhost:1', true],
    ['http://[::1]:3000/v1', true],
    ['https://api.deepseek.com', false],
    ['http://127.0.0.1.example.com', false],
    ['http://10.0.0.1', false],
  ])('%s → %s', (url, expected) => {
    expect(isLoopback(url)).toBe(expected)
  })
})
