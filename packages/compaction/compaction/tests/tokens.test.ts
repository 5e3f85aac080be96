import { describe, expect, it } from 'vitest'
import { estimateMessageTokens, estimateSurface, measureSurface } from '../src/index.js'
import { newSession, writeTurn } from './helpers.js'

describe('token accounting', () => {
  it('estimates 4 characters per token, 1,000 per image, 4 per message', () => {
    expect(estimateMessageTokens({ role: 'user', content: [{ type: 'text', text: 'x'.repeat(10) }] })).toBe(
      3 + 4,
    )
    expect(
      estimateMessageTokens({
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'x'.repeat(8) },
          { type: 'tool-call', id: 'c' as never, name: 'read', arguments: '{"a":1}' },
        ],
      }),
    ).toBe(Math.ceil((8 + 4 + 7) / 4) + 4)
    expect(
      estimateMessageTokens({
        role: 'user',
        content: [{ type: 'image', mediaType: 'image/png', data: 'AAAA' }],
      }),
    ).toBe(1_000 + 4)
  })

  it('uses the provider usage of the latest assistant message plus estimates after it, until a replace', () => {
    const session = newSession('tokens')
    writeTurn(session, 'one', [
      { text: 'answer', usage: { inputTokens: 900, outputTokens: 100, totalTokens: 1_000 } },
    ])
    expect(measureSurface(session)).toEqual({ tokens: 1_000, source: 'provider' })
    const user = session.append('user/message', {
      message: { role: 'user', content: [{ type: 'text', text: 'x'.repeat(40) }] },
    })
    expect(measureSurface(session)).toEqual({ tokens: 1_000 + 10 + 4, source: 'provider' })
    // a replace makes the provider's count stale: estimates only
    session.append(
      'user/message',
      { message: { role: 'user', content: [{ type: 'text', text: 'y' }] } },
      { surfaceOp: { op: 'replace', startSeq: user.seq, endSeq: user.seq }, sourceEventSeqs: [user.seq] },
    )
    expect(measureSurface(session)).toEqual({ tokens: estimateSurface(session), source: 'estimate' })
    // a later assistant message with usage takes over again
    writeTurn(session, 'two', [{ text: 'ok', usage: { inputTokens: 50, outputTokens: 5, totalTokens: 55 } }])
    expect(measureSurface(session)).toEqual({ tokens: 55, source: 'provider' })
  })
})
