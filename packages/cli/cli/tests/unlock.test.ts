import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { JsonlStore } from '@keel/store-jsonl'
import { afterEach, describe, expect, it } from 'vitest'
import { runCli } from '../src/index.js'

const homes: string[] = []
afterEach(() => {
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true })
})

function capture() {
  let out = ''
  let err = ''
  return {
    io: (home: string) => ({
      env: { KEEL_HOME: home },
      out: (t: string) => {
        out += t
      },
      err: (t: string) => {
        err += t
      },
    }),
    get out() {
      return out
    },
    get err() {
      return err
    },
  }
}

describe('keel sessions unlock', () => {
  it('removes a lock held on another host, after which the session opens; refuses a live local one', async () => {
    const home = mkdtempSync(join(tmpdir(), 'keel-unlock-'))
    homes.push(home)
    const store = new JsonlStore({ home })
    const handle = await store.create({ id: 'far' })
    handle.session.append('turn/start', { turn: 1 })
    handle.session.append('turn/end', { turn: 1, reason: 'completed' })
    await handle.close()
    const lock = join(store.sessionsDir, 'far', 'writer.lock')
    writeFileSync(lock, JSON.stringify({ pid: 77, host: 'laptop.example', since: 0, nonce: 'aa' }))
    const opened = await store.open('far').catch((error: Error) => error)
    expect((opened as Error).message).toContain('keel sessions unlock far')

    const c = capture()
    expect(await runCli(['sessions', 'unlock', 'far'], c.io(home))).toBe(0)
    expect(c.out).toContain('removed the lock of process 77 on laptop.example')
    const again = await store.open('far')
    const c2 = capture()
    expect(await runCli(['sessions', 'unlock', 'far'], c2.io(home))).toBe(1)
    expect(c2.err).toContain('SESSION_LOCKED')
    expect(JSON.parse(readFileSync(lock, 'utf8'))).toMatchObject({ pid: process.pid })
    await again.close()
    const c3 = capture()
    expect(await runCli(['sessions', 'unlock', 'far'], c3.io(home))).toBe(0)
    expect(c3.out).toContain('has no writer lock')
    const c4 = capture()
    expect(await runCli(['sessions', 'unlock'], c4.io(home))).toBe(2)
  })
})
