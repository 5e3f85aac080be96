import { Session, type SessionHeaderInit } from '@keel/session'
import { describe, expect, it } from 'vitest'

const MB = 1 << 20
const HUGE_KEY = 'k'.repeat(MB)

/** The error `fn` throws (it must throw). */
function thrown(fn: () => unknown): Error & { code?: string; details?: Record<string, unknown> } {
  try {
    fn()
  } catch (error) {
    return error as Error & { code?: string }
  }
  throw new Error('expected a throw')
}

describe('session errors are bounded whatever the data holds', () => {
  it('EVENT_DATA_INVALID for a 1 MB unknown key is a short message naming the key, elided', () => {
    const session = Session.create('bounded')
    session.append('turn/start', { turn: 1 })
    const error = thrown(() =>
      session.append('user/message', {
        message: { role: 'user', content: [{ type: 'text', text: 'x', [HUGE_KEY]: 1 } as never] },
      }),
    )
    expect(error.code).toBe('EVENT_DATA_INVALID')
    expect(error.message).toContain('data.message.content[0]')
    expect(error.message).toContain('characters elided')
    expect(error.message.length).toBeLessThan(1_000)
    expect(JSON.stringify(error.details).length).toBeLessThan(2_000)
  })

  it('EVENT_DATA_INVALID under a 1 MB key of the path, and many issues, stays bounded', () => {
    const session = Session.create('bounded-path')
    session.append('turn/start', { turn: 1 })
    const content = Array.from({ length: 5_000 }, () => ({ type: 'text', text: 1 }))
    const error = thrown(() =>
      session.append('user/message', { message: { role: 'user', content } } as never),
    )
    expect(error.code).toBe('EVENT_DATA_INVALID')
    expect(error.message.length).toBeLessThan(1_000)
    expect(JSON.stringify(error.details).length).toBeLessThan(5_000)
  })

  it('HEADER_INVALID for a 1 MB key, a 1 MB id or a 1 MB version is a short message', () => {
    const key = thrown(() => Session.create('h', { [HUGE_KEY]: 1 } as SessionHeaderInit))
    expect(key.code).toBe('HEADER_INVALID')
    expect(key.message).toContain('characters elided')
    expect(key.message.length).toBeLessThan(1_000)
    const id = thrown(() => Session.create(`id-${HUGE_KEY}\u0000`))
    expect(id.code).toBe('HEADER_INVALID')
    expect(id.message.length).toBeLessThan(1_000)
    const version = thrown(() => Session.create('v', { version: HUGE_KEY as never }))
    expect(version.code).toBe('HEADER_INVALID')
    expect(version.message.length).toBeLessThan(1_000)
  })
})
