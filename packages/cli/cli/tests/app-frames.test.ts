import { PassThrough } from 'node:stream'
import { createElement as h } from 'react'
import { describe, expect, it } from 'vitest'
import { loadInteractiveUi } from '../src/tui/load.js'

/** A stdout Ink draws on: 100 columns, 40 rows; `frames()` cuts what it wrote at each synchronized update. */
function screen() {
  const out = Object.assign(new PassThrough(), { columns: 100, rows: 40, isTTY: true })
  let written = ''
  out.on('data', (chunk: Buffer) => {
    written += chunk.toString('utf8')
  })
  return { out, frames: () => written.split('\x1b[?2026h').filter((f) => f !== '') }
}

describe('the interactive UI invites a key only once keys are heard', () => {
  it('shows the queue of a resumed session at once, but "Enter runs it" only with the prompt', async () => {
    // Ink judges CI when first imported: load it the way `keel` does, so every frame is drawn.
    const { Feed } = await loadInteractiveUi({ color: false })
    const { App } = await import('../src/tui/app.js')
    const { render } = await import('ink')
    const feed = new Feed()
    feed.setQueue(['do not lose me'], true)
    const { out, frames } = screen()
    const stdin = new PassThrough() as unknown as NodeJS.ReadStream
    const noop = () => {}
    const instance = render(
      h(App, {
        feed,
        actions: {
          submit: noop,
          resume: noop,
          editLast: () => undefined,
          interrupt: noop,
          exit: noop,
          complete: async () => undefined,
          remember: noop,
        },
        info: { route: () => ({ model: 'm' }), history: [] },
      }),
      { stdout: out as unknown as NodeJS.WriteStream, stdin, exitOnCtrlC: false, patchConsole: false },
    )
    try {
      // waits for the prompt as long as a loaded machine may need (no time is asserted)
      for (const until = Date.now() + 20_000; Date.now() < until && !frames().some((f) => f.includes('› ')); )
        await new Promise((r) => setTimeout(r, 10))
      expect(frames().some((f) => f.includes('› '))).toBe(true)
      const first = frames()[0]!
      // The first frame is drawn before the effects that turn raw mode on and listen: a key typed
      // then is the line discipline's (an Enter arrives as a line feed, Ctrl-J), so nothing in it
      // may invite one.
      expect(first).toContain('starting…')
      expect(first).toContain('⋯ queued: do not lose me')
      for (const frame of frames()) {
        if (frame.includes('Enter runs it')) expect(frame).toContain('› ')
      }
      expect(frames().some((f) => f.includes('Enter runs it'))).toBe(true)
    } finally {
      instance.unmount()
    }
  })
})
