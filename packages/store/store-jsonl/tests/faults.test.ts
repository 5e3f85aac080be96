import { spawn, spawnSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { SESSION_FORMAT_VERSION } from '@keel/session'
import { HOST } from '@keel/store'
import { appendSampleTurn } from '@keel/store-testkit'
import { describe, expect, it } from 'vitest'
import { JsonlStore, keelHome } from '../src/index.js'
import { exited, failure, homesRemovedAfterEach, runChild } from './helpers.js'

const home = homesRemovedAfterEach()

/** A stored session of two sample turns and a final unicode message; returns its file. */
async function twoTurns(store: JsonlStore, id = 's'): Promise<string> {
  const handle = await store.create({ id, header: { cwd: '/w' } })
  appendSampleTurn(handle.session, 'a')
  appendSampleTurn(handle.session, 'b')
  handle.session.append('developer/message', {
    message: { role: 'developer', content: [{ type: 'text', text: 'fin: é ü 😀 ✓' }] },
  })
  await handle.close()
  return store.fileOf(id)
}

function lines(file: string): string[] {
  return readFileSync(file, 'utf8').split('\n').slice(0, -1)
}

function writeLines(file: string, content: string[]): void {
  writeFileSync(file, content.map((l) => `${l}\n`).join(''))
}

describe('jsonl layout', () => {
  it('stores <home>/sessions/<id>/session.jsonl: physical header, then one event per line', async () => {
    const h = home()
    const store = new JsonlStore({ home: h })
    const handle = await store.create({ id: 'layout', header: { cwd: '/w', title: 'T' } })
    expect(existsSync(join(h, 'sessions', 'layout', 'writer.lock'))).toBe(true)
    expect(handle.directory).toBe(join(h, 'sessions', 'layout'))
    appendSampleTurn(handle.session)
    await handle.close()
    expect(existsSync(join(h, 'sessions', 'layout', 'writer.lock'))).toBe(false)
    const content = lines(join(h, 'sessions', 'layout', 'session.jsonl'))
    expect(JSON.parse(content[0]!)).toEqual({
      format: 'keel-session',
      formatVersion: SESSION_FORMAT_VERSION,
      header: handle.session.header,
    })
    expect(content.slice(1).map((l) => JSON.parse(l))).toEqual(
      JSON.parse(JSON.stringify(handle.session.events)),
    )
    expect(await store.readRaw('layout')).toBe(readFileSync(store.fileOf('layout'), 'utf8'))
  })

  it('streams lines of any length across read chunks, multi-byte text intact, events deep-frozen', async () => {
    const store = new JsonlStore({ home: home(), maxEventBytes: 8 * 1024 * 1024 })
    const handle = await store.create({ id: 'wide' })
    // the last is longer than two read chunks (1 MiB each)
    const texts = [1, 2, 3, 50].map((i) => `${'é😀'.repeat(60_000 + i * 7777)}|${i}`)
    for (const text of texts) {
      handle.session.append('developer/message', {
        message: { role: 'developer', content: [{ type: 'text', text }] },
      })
    }
    for (let i = 0; i < 2000; i++) appendSampleTurn(handle.session, 'ü'.repeat(i % 97))
    await handle.close()
    const loaded = await store.load('wide')
    expect(JSON.stringify(loaded.events)).toBe(JSON.stringify(handle.session.events))
    const first = loaded.events[0]!
    expect(Object.isFrozen(first) && Object.isFrozen(first.data)).toBe(true)
    expect(Object.isFrozen((first.data as { message: { content: object[] } }).message.content[0])).toBe(true)
  })

  it('a full replay of lines its integrity records vouch for hands out every object frozen: mutation is refused', async () => {
    const h = home()
    await twoTurns(new JsonlStore({ home: h }), 'frozen')
    const loaded = await new JsonlStore({ home: h, checkpoints: false }).load('frozen')
    expect(loaded.residentFrom).toBe(0)
    let objects = 0
    const allFrozen = (v: unknown): boolean => {
      if (v === null || typeof v !== 'object') return true
      objects++
      return Object.isFrozen(v) && Object.values(v).every(allFrozen)
    }
    expect(loaded.events.every(allFrozen)).toBe(true)
    expect(objects).toBeGreaterThan(loaded.events.length * 2)
    const message = loaded.events.find((e) => e.type === 'developer/message')!.data as {
      message: { content: { text: string }[] }
    }
    expect(() => {
      message.message.content[0]!.text = 'changed'
    }).toThrow(TypeError)
    expect(() => message.message.content.push({ text: 'more' })).toThrow(TypeError)
    expect(() => {
      ;(loaded.events[0] as { time: number }).time = 0
    }).toThrow(TypeError)
    expect(message.message.content[0]!.text).toBe('fin: é ü 😀 ✓')
  })

  it('defaults to $KEEL_HOME, else ~/.keel', () => {
    expect(keelHome({ KEEL_HOME: '/x/y' })).toBe('/x/y')
    expect(keelHome({})).toMatch(/\.keel$/)
    const h = home()
    const previous = process.env.KEEL_HOME
    process.env.KEEL_HOME = h
    try {
      expect(new JsonlStore().sessionsDir).toBe(join(h, 'sessions'))
    } finally {
      if (previous === undefined) delete process.env.KEEL_HOME
      else process.env.KEEL_HOME = previous
    }
  })

  it('lists from first lines only (a corrupt body does not hide a session)', async () => {
    const store = new JsonlStore({ home: home() })
    const file = await twoTurns(store, 'listed')
    const content = lines(file)
    content[5] = 'garbage'
    writeLines(file, content)
    expect((await store.list()).map((s) => s.id)).toEqual(['listed'])
    expect((await store.list())[0]).toMatchObject({ cwd: '/w' })
  })

  it('honours a configured per-event cap', async () => {
    const store = new JsonlStore({ home: home(), maxEventBytes: 2000 })
    const handle = await store.create({ id: 'cap' })
    expect(() =>
      handle.session.append('user/message', {
        message: { role: 'user', content: [{ type: 'text', text: 'z'.repeat(2000) }] },
      }),
    ).toThrow(expect.objectContaining({ code: 'EVENT_TOO_LARGE' }))
    handle.session.append('turn/start', { turn: 1 })
    await handle.close()
    expect((await store.load('cap')).nextSeq).toBe(1)
  })
})

describe('jsonl damaged files', () => {
  it('drops a torn last line at every truncation offset, keeps a complete one without newline', async () => {
    const h = home()
    const store = new JsonlStore({ home: h })
    const file = await twoTurns(store)
    const full = readFileSync(file)
    const lastStart = full.lastIndexOf(10, full.length - 2) + 1
    const events = lines(file).length - 1
    const lastLength = full.length - 1 - lastStart
    expect(lastLength).toBeGreaterThan(50)
    for (let keep = 1; keep <= lastLength; keep++) {
      writeFileSync(file, full.subarray(0, lastStart + keep))
      const inspection = await store.inspect('s')
      if (keep < lastLength) {
        expect(inspection.events.length, `offset ${keep}`).toBe(events - 1)
        expect(inspection.notices.map((n) => n.code)).toEqual(['TORN_TAIL_DROPPED'])
      } else {
        expect(inspection.events.length).toBe(events)
        expect(inspection.notices.map((n) => n.code)).toEqual(['MISSING_FINAL_NEWLINE'])
      }
      // inspect wrote nothing
      expect(readFileSync(file).length).toBe(lastStart + keep)
      if (keep % 17 === 0 || keep >= lastLength - 1) {
        // open repairs the file; the next append lands on a clean line
        const handle = await store.open('s')
        expect(handle.notices.length).toBe(1)
        appendSampleTurn(handle.session)
        await handle.close()
        const reloaded = await store.inspect('s')
        expect(reloaded.notices).toEqual([])
        expect(reloaded.events.length).toBe(handle.session.nextSeq)
      }
    }
  })

  it('refuses a garbage line in the middle, naming file and line', async () => {
    const store = new JsonlStore({ home: home() })
    const file = await twoTurns(store)
    const content = lines(file)
    for (const [index, bad] of [
      [4, '{"type":"turn/sta'],
      [7, ''],
      [content.length - 1, 'not json at all'],
    ] as const) {
      const damaged = [...content]
      damaged[index] = bad
      writeLines(file, damaged)
      for (const attempt of [() => store.load('s'), () => store.open('s'), () => store.inspect('s')]) {
        const error = await failure(attempt())
        expect(error.code).toBe('SESSION_CORRUPT')
        expect(error.details).toMatchObject({ file, line: index + 1 })
      }
    }
    // a line that parses but breaks the event rules is corrupt too
    const damaged = [...content]
    damaged[3] = JSON.stringify({ ...JSON.parse(content[3]!), data: { turn: 'one' } })
    writeLines(file, damaged)
    expect((await failure(store.load('s'))).details).toMatchObject({ line: 4, seq: 2 })
    // nothing was changed by the refused open
    expect(lines(file)).toEqual(damaged)
    expect(existsSync(join(store.sessionsDir, 's', 'writer.lock'))).toBe(false)
  })

  it('refuses a duplicated or a skipped seq', async () => {
    const store = new JsonlStore({ home: home() })
    const file = await twoTurns(store)
    const content = lines(file)
    writeLines(file, [...content.slice(0, 6), content[5]!, ...content.slice(6)])
    const duplicated = await failure(store.load('s'))
    expect(duplicated.code).toBe('SESSION_CORRUPT')
    expect(duplicated.details).toMatchObject({ line: 7, seq: 5 })
    writeLines(file, [...content.slice(0, 6), ...content.slice(7)])
    const skipped = await failure(store.open('s'))
    expect(skipped.code).toBe('SESSION_CORRUPT')
    expect(skipped.details).toMatchObject({ line: 7, seq: 5 })
  })

  it('refuses a newer format before parsing any event; an older one without migration', async () => {
    const store = new JsonlStore({ home: home() })
    const file = await twoTurns(store)
    const content = lines(file)
    const header = JSON.parse(content[0]!)
    // a body this build could never parse: the version check must come first
    writeLines(file, [
      JSON.stringify({ ...header, formatVersion: SESSION_FORMAT_VERSION + 1 }),
      '\u0000garbage',
    ])
    const newer = await failure(store.open('s'))
    expect(newer.code).toBe('SESSION_FORMAT_UNSUPPORTED')
    expect(newer.details).toMatchObject({
      direction: 'newer',
      found: SESSION_FORMAT_VERSION + 1,
      where: file,
    })
    expect((newer as unknown as Error).message).toContain('newer Keel')
    writeLines(file, [JSON.stringify({ ...header, formatVersion: 0 }), ...content.slice(1)])
    expect((await failure(store.load('s'))).details).toMatchObject({ direction: 'no-migration', found: 0 })
    writeLines(file, ['{"format":"something-else"}', ...content.slice(1)])
    expect((await failure(store.load('s'))).details).toMatchObject({ line: 1 })
  })
})

describe('jsonl writer lock', () => {
  it('takes over the stale lock of a dead process with a notice', async () => {
    const store = new JsonlStore({ home: home() })
    await twoTurns(store)
    const dead = spawnSync(process.execPath, [
      '-e',
      'process.stdout.write(String(process.pid))',
    ]).stdout.toString()
    const lock = join(store.sessionsDir, 's', 'writer.lock')
    writeFileSync(lock, JSON.stringify({ pid: Number(dead), host: HOST, since: 1, nonce: 'old' }))
    const handle = await store.open('s')
    expect(handle.notices.map((n) => n.code)).toEqual(['STALE_LOCK_TAKEN_OVER'])
    expect(JSON.parse(readFileSync(lock, 'utf8'))).toMatchObject({ pid: process.pid, host: HOST })
    await handle.close()
  })

  it('refuses a live holder and a holder on another host, naming them', async () => {
    const store = new JsonlStore({ home: home() })
    await twoTurns(store)
    const lock = join(store.sessionsDir, 's', 'writer.lock')
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 20000)'])
    try {
      writeFileSync(lock, JSON.stringify({ pid: sleeper.pid, host: HOST, since: 1, nonce: 'live' }))
      const live = await failure(store.open('s'))
      expect(live.code).toBe('SESSION_LOCKED')
      expect(live.details.holder).toMatchObject({ pid: sleeper.pid, host: HOST })
    } finally {
      sleeper.kill('SIGKILL')
    }
    writeFileSync(lock, JSON.stringify({ pid: 1, host: 'elsewhere.example', since: 1, nonce: 'far' }))
    const far = await failure(store.open('s'))
    expect(far.details.holder).toMatchObject({ host: 'elsewhere.example' })
    // readers are not blocked
    expect((await store.load('s')).nextSeq).toBe(23)
  })

  it('two processes opening the same session: exactly one wins', async () => {
    const h = home()
    const store = new JsonlStore({ home: h })
    for (const id of ['r1', 'r2', 'r3']) await twoTurns(store, id)
    for (const id of ['r1', 'r2', 'r3']) {
      const racers = [runChild(['race', h, id]), runChild(['race', h, id])]
      await expect
        .poll(() => racers.every((r) => r.out.length > 0), { timeout: 20_000, interval: 20 })
        .toBe(true)
      const results = racers.map((r) => r.out[0]).sort()
      expect(results).toEqual(['error SESSION_LOCKED', 'won'])
      for (const r of racers) r.proc.stdin!.end()
      await Promise.all(racers.map((r) => exited(r.proc)))
    }
  }, 60_000)
})

describe('jsonl crash safety', () => {
  it('keeps every acknowledged event across 50 SIGKILLs at random moments', async () => {
    const h = home()
    const store = new JsonlStore({ home: h })
    let acknowledged = 0
    let sawTorn = 0
    let sawInterrupted = 0
    const iterations = 50
    for (let i = 0; i < iterations; i++) {
      const run = runChild(['crash', h, 'crashy'])
      // wait for 0–3 acknowledgements, then kill after a random delay
      const acks = Math.floor(Math.random() * 4)
      await expect
        .poll(() => run.out.filter((l) => l.startsWith('ack')).length >= acks || run.proc.exitCode !== null, {
          timeout: 20_000,
          interval: 2,
        })
        .toBe(true)
      await new Promise((r) => setTimeout(r, Math.random() * 15))
      run.proc.kill('SIGKILL')
      await exited(run.proc)
      expect(run.out.find((l) => l.startsWith('fatal'))).toBeUndefined()
      for (const line of run.out)
        if (line.startsWith('ack ')) acknowledged = Math.max(acknowledged, Number(line.slice(4)))
      if (!existsSync(store.fileOf('crashy'))) continue
      const inspection = await store.inspect('crashy')
      expect(inspection.events.length).toBeGreaterThanOrEqual(acknowledged)
      if (inspection.notices.some((n) => n.code === 'TORN_TAIL_DROPPED')) sawTorn++
      if (inspection.interruptedTurn !== undefined) sawInterrupted++
      const session = await store.load('crashy')
      expect(session.events.map((e) => e.seq)).toEqual(session.events.map((_, s) => s))
    }
    // the next open repairs whatever the last kill left
    const handle = await store.open('crashy')
    expect(handle.session.openTurn).toBeNull()
    await handle.close()
    expect((await store.inspect('crashy')).notices).toEqual([])
    expect(acknowledged).toBeGreaterThan(0)
    expect(sawInterrupted).toBeGreaterThan(0)
    console.info(
      `crash loop: ${iterations} kills, ${acknowledged} events acknowledged, ${sawTorn} torn tails dropped, ${sawInterrupted} interrupted turns`,
    )
  }, 180_000)

  it('a failed write (file size limit) surfaces on flush, refuses more appends, loses nothing acknowledged', async () => {
    const h = home()
    const run = runChild(['fill', h, 'full'], { shell: 'trap "" XFSZ; ulimit -f 400' })
    await exited(run.proc)
    const acks = run.out.filter((l) => l.startsWith('ack ')).map((l) => Number(l.slice(4)))
    expect(acks.length).toBeGreaterThan(5)
    expect(run.out).toContain('error SESSION_WRITE_FAILED EFBIG')
    expect(run.out).toContain('refused SESSION_WRITE_FAILED')
    const inspection = await new JsonlStore({ home: h }).inspect('full')
    expect(inspection.events.length).toBeGreaterThanOrEqual(Math.max(...acks))
  }, 60_000)
})
