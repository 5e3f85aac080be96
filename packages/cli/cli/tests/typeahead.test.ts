import { describe, expect, it } from 'vitest'
import { idle, ptyTests } from './pty.js'

const t = ptyTests()

describe('typing before keel is ready', { timeout: 120_000 }, () => {
  it('a line typed and entered while keel starts is sent as the first prompt once keel is ready', async () => {
    const r = await t.rig({ text: 'Heard you.' })
    const pty = t.open(r, [])
    // written the moment keel is spawned: the terminal is still cooked, so Enter arrives as a line feed
    pty.write('early words\r')
    await pty.waitFor('Heard you.', 30_000)
    await idle(pty)
    const messages = r.server.requests[0]!.body!.messages as Array<{ role: string; content: string }>
    expect(messages.filter((m) => m.role === 'user').at(-1)!.content).toBe('early words')
    const rows = await pty.rows()
    // the prompt was sent, not left in the input line with a new line after it
    expect(rows.some((row) => row.includes('> early words'))).toBe(true)
    expect(
      rows
        .filter((row) => row.startsWith('›'))
        .at(-1)!
        .trim(),
    ).toBe('›')
  })
})
