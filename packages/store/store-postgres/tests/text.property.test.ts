import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { PG_URL, pgFixture } from './helpers.js'

/** Any sequence of UTF-16 code units: NUL, control characters, lone and paired surrogates. */
const codeUnits = fc
  .array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 40 })
  .map((units) => String.fromCharCode(...units))

describe.skipIf(!PG_URL)('postgres: any text round-trips exactly', () => {
  it('a user message of arbitrary UTF-16 code units is stored and reloaded unchanged', async () => {
    const f = await pgFixture('prop')
    try {
      const handle = await f.store.create({ id: 'p' })
      const texts: string[] = []
      await fc.assert(
        fc.asyncProperty(codeUnits, async (text) => {
          handle.session.append('user/message', {
            message: { role: 'user', content: [{ type: 'text', text }] },
          })
          texts.push(text)
          await handle.flush()
        }),
        { seed: 11, numRuns: 150 },
      )
      await handle.close()
      const other = await f.reopen()
      const loaded = await other.load('p')
      const stored = loaded.events.map(
        (e) => (e.data as unknown as { message: { content: [{ text: string }] } }).message.content[0].text,
      )
      expect(stored).toEqual(texts)
      await other.close()
    } finally {
      await f.store.close()
      await f.cleanup?.()
    }
  }, 60_000)
})
