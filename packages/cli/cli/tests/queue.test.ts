import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ScriptedResponse } from '@keel/scripted-server'
import { JsonlStore } from '@keel/store-jsonl'
import { describe, expect, it } from 'vitest'
import type { KeelRig } from './keel-process.js'
import { idle, ptyTests } from './pty.js'

const { rig, open } = ptyTests()
const slow = (word: string): ScriptedResponse => ({
  text: `${word} ${'word '.repeat(600)}`,
  chunking: { text: 5 },
  delayMs: 40,
})
/** The session's log once it holds an event of `type` (polled; the test's timeout bounds it). */
async function untilLogged(r: KeelRig, type: string): Promise<string> {
  const sessions = join(r.home, 'sessions')
  for (;;) {
    for (const id of existsSync(sessions) ? readdirSync(sessions) : []) {
      const log = join(sessions, id, 'session.jsonl')
      const text = existsSync(log) ? readFileSync(log, 'utf8') : ''
      if (text.includes(`"type":"${type}"`)) return text
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const userTexts = async (r: KeelRig) => {
  const [summary] = await new JsonlStore({ home: r.home }).list({ limit: 1 })
  const events = (await new JsonlStore({ home: r.home }).load(summary!.id)).events
  return {
    events,
    users: events.flatMap((e) =>
      e.type === 'user/message'
        ? [e.data.message.content.map((b) => (b.type === 'text' ? b.text : '')).join('')]
        : [],
    ),
  }
}

describe('nothing typed is lost (a real pseudo-terminal)', { timeout: 180_000 }, () => {
  it('a line typed while a turn runs is shown as queued and runs next', async () => {
    const r = await rig(
      { text: 'first answer, slowly', chunking: { text: 2 }, delayMs: 60 },
      { text: 'second answer' },
    )
    const pty = open(r, ['--preset', 'minimal'])
    await pty.waitFor('› ')
    pty.write('first\r')
    await pty.waitFor('working…')
    pty.write('second\r')
    await pty.waitFor('⋯ queued: second')
    await pty.waitFor('second answer')
    await idle(pty)
    pty.write('\x04')
    expect(await pty.exitCode()).toBe(0)
    const { users, events } = await userTexts(r)
    expect(users).toEqual(['first', 'second'])
    const splices = events.filter((e) => e.type === 'agent/inbox/spliced').map((e) => e.data)
    expect(splices).toEqual([
      {
        target: 'next-turn',
        start: 0,
        inserted: [{ role: 'user', content: [{ type: 'text', text: 'second' }] }],
      },
      { target: 'next-turn', start: 0, removedCount: 1, inserted: [] },
    ])
  })

  it('Ctrl-C aborts only the running turn: the queue waits, Enter runs it, ↑ takes one back to edit', async () => {
    const r = await rig(slow('one'), { text: 'answer to queued' }, slow('two'), { text: 'answer to edited' })
    const pty = open(r, ['--preset', 'minimal'])
    await pty.waitFor('› ')
    pty.write('go slowly\r')
    await pty.waitFor('one word')
    pty.write('run after me\r')
    await pty.waitFor('⋯ queued: run after me')
    pty.write('\x03')
    await pty.waitFor('1 queued message waits: Enter runs it')
    await idle(pty)
    let mark = pty.screen.length
    pty.write('\r')
    await pty.waitFor('answer to queued', 60_000, mark)
    await idle(pty)
    mark = pty.screen.length
    pty.write('slow again\r')
    await pty.waitFor('two word', 60_000, mark)
    pty.write('typo mesage\r')
    await pty.waitFor('⋯ queued: typo mesage', 60_000, mark)
    pty.write('\x03')
    await pty.waitFor('Enter runs it', 60_000, mark)
    await idle(pty)
    pty.write('\x1b[A') // ↑: the queued message comes back into the input line
    await pty.waitUntil('the queue to be empty', (s) => s.lastIndexOf('› typo mesage') > mark)
    for (let i = 0; i < 'mesage'.length; i++) pty.write('\x7f')
    pty.write('message, edited\r')
    await pty.waitFor('answer to edited', 60_000, mark)
    await idle(pty)
    pty.write('\x04')
    expect(await pty.exitCode()).toBe(0)
    const { users, events } = await userTexts(r)
    expect(users).toEqual(['go slowly', 'run after me', 'slow again', 'typo message, edited'])
    expect(events.some((e) => e.type === 'agent/inbox/spliced' && e.data.outcome === 'canceled')).toBe(true)
    expect(JSON.stringify(r.server.requests[3]!.body!.messages)).toContain('typo message, edited')
  })

  it('the queue is durable: after a crash, resume shows it waiting, and Enter runs it', async () => {
    const r = await rig(slow('three'), { text: 'ran after the crash' })
    const pty = open(r, ['--preset', 'minimal'])
    await pty.waitFor('› ')
    pty.write('start\r')
    await pty.waitFor('three word')
    pty.write('do not lose me\r')
    await pty.waitFor('⋯ queued: do not lose me')
    // The queued line reaches the log while the answer still streams (about 24 s more), not at the turn end.
    const written = await untilLogged(r, 'agent/inbox/spliced')
    expect(written).not.toContain('"type":"turn/end"')
    pty.kill('SIGKILL')
    await pty.exitCode()
    const again = open(r, ['-c'])
    await again.waitFor('⋯ queued: do not lose me')
    await again.waitFor('Enter runs it')
    again.write('\r')
    await again.waitFor('ran after the crash')
    await idle(again)
    again.write('\x04')
    expect(await again.exitCode()).toBe(0)
    const { users } = await userTexts(r)
    expect(users).toEqual(['start', 'do not lose me'])
  })

  for (const [signal, code] of [
    ['SIGTERM', 143],
    ['SIGHUP', 129],
  ] as const) {
    it(`${signal} in the interactive UI ends the running turn, closes the log, keeps the queue, exits ${code}`, async () => {
      const r = await rig(slow('four'))
      const pty = open(r, ['--preset', 'minimal'])
      await pty.waitFor('› ')
      pty.write('start\r')
      await pty.waitFor('four word')
      pty.write('keep me\r')
      await pty.waitFor('⋯ queued: keep me')
      pty.kill(signal)
      expect(await pty.exitCode()).toBe(code)
      const [summary] = await new JsonlStore({ home: r.home }).list({ limit: 1 })
      const inspection = await new JsonlStore({ home: r.home }).inspect(summary!.id)
      expect(inspection.interruptedTurn).toBeUndefined()
      const ends = inspection.events.filter((e) => e.type === 'turn/end').map((e) => e.data.reason)
      expect(ends).toEqual(['aborted'])
      const queued = inspection.events.filter((e) => e.type === 'agent/inbox/spliced')
      expect(queued).toHaveLength(1)
    })
  }
})
