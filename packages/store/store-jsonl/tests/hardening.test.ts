import { spawn, spawnSync } from 'node:child_process'
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { HOST } from '@keel/store'
import { appendSampleTurn, SAMPLE_TURN_EVENTS as N } from '@keel/store-testkit'
import { afterEach, describe, expect, it } from 'vitest'
import { JsonlStore } from '../src/index.js'
import { exited, failure, homesRemovedAfterEach, runChild } from './helpers.js'

const home = homesRemovedAfterEach()

async function stored(store: JsonlStore, id = 's', turns = 2): Promise<string> {
  const handle = await store.create({ id, header: { cwd: '/w' } })
  for (let i = 0; i < turns; i++) appendSampleTurn(handle.session, `turn ${i} é`)
  await handle.close()
  return store.fileOf(id)
}

function lockOf(store: JsonlStore, id = 's'): string {
  return join(store.sessionsDir, id, 'writer.lock')
}

const sleeper = (proc: ReturnType<typeof spawn>, resolve: (v: unknown) => void) => proc.once('spawn', resolve)
const bootId = () => readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
const hasProc = existsSync('/proc/self/stat')

describe('jsonl input hardening', () => {
  it('refuses invalid UTF-8 with SESSION_CORRUPT naming the line, instead of loading U+FFFD', async () => {
    const store = new JsonlStore({ home: home() })
    const file = await stored(store)
    const bytes = readFileSync(file)
    const lines = bytes.toString('utf8').split('\n')
    // line 5 (seq 3): replace the 2-byte é by a lone continuation byte
    const at =
      Buffer.byteLength(lines.slice(0, 4).join('\n')) + 1 + Buffer.byteLength(lines[4]!.split('é')[0]!)
    expect(bytes[at]).toBe(0xc3)
    bytes[at] = 0x80
    writeFileSync(file, bytes)
    const error = await failure(store.load('s'))
    expect(error.code).toBe('SESSION_CORRUPT')
    expect(error.details).toMatchObject({
      line: 5,
      offset: Buffer.byteLength(lines.slice(0, 4).join('\n')) + 1,
    })
    expect(error.message).toContain('UTF-8')
    expect((await failure(store.open('s'))).code).toBe('SESSION_CORRUPT')
    // in the header line too
    const header = readFileSync(file)
    header[header.indexOf('/w') + 1] = 0xff
    writeFileSync(file, header)
    expect((await failure(store.load('s'))).details).toMatchObject({ line: 1 })
  })

  it('refuses a stored line nested 20,000 levels deep with SESSION_CORRUPT naming the line', async () => {
    const store = new JsonlStore({ home: home() })
    const file = await stored(store)
    const deep = `${'['.repeat(20_000)}1${']'.repeat(20_000)}`
    appendFileSync(
      file,
      `{"type":"elsewhere/note","seq":${2 * N},"time":1,"ignorable":true,"data":${deep}}\n`,
    )
    const error = await failure(store.load('s'))
    expect(error.code).toBe('SESSION_CORRUPT')
    expect(error.details).toMatchObject({ line: 2 * N + 2, seq: 2 * N })
    expect(error.message).toContain('deeper than 512 levels')
  })

  it('lists no session whose header is invalid (createdAt: "yesterday"); loading it names the field', async () => {
    const store = new JsonlStore({ home: home() })
    const file = await stored(store)
    await stored(store, 'fine')
    const [first, ...rest] = readFileSync(file, 'utf8').split('\n')
    const physical = JSON.parse(first!)
    physical.header.createdAt = 'yesterday'
    writeFileSync(file, [JSON.stringify(physical), ...rest].join('\n'))
    expect((await store.list()).map((s) => s.id)).toEqual(['fine'])
    const error = await failure(store.load('s'))
    expect(error.code).toBe('SESSION_CORRUPT')
    expect(error.details).toMatchObject({ line: 1 })
    expect(error.message).toContain('header.createdAt')
  })

  it('says what is wrong with a formatVersion stored as a string', async () => {
    const store = new JsonlStore({ home: home() })
    const file = await stored(store)
    const [first, ...rest] = readFileSync(file, 'utf8').split('\n')
    writeFileSync(file, [first!.replace('"formatVersion":1', '"formatVersion":"1"'), ...rest].join('\n'))
    const error = await failure(store.load('s'))
    expect(error.code).toBe('SESSION_FORMAT_UNSUPPORTED')
    expect(error.details).toMatchObject({ direction: 'invalid', found: '1' })
    expect(error.message).toContain('"1" (string), which is not a version number')
    expect(error.message).not.toContain('no registered migration')
  })

  it('stores a spilled event as a stub line and a fsynced blob file, and lists event counts', async () => {
    const store = new JsonlStore({ home: home(), maxLineBytes: 4096 })
    const handle = await store.create({ id: 'b' })
    appendSampleTurn(handle.session, 'p'.repeat(5000))
    await handle.close()
    const lines = readFileSync(store.fileOf('b'), 'utf8').split('\n').slice(1, -1)
    const stubs = lines.map((l) => JSON.parse(l)).filter((e) => 'blob' in e)
    expect(stubs.length).toBeGreaterThan(0)
    for (const stub of stubs) {
      expect(Object.keys(stub)).toEqual(['type', 'seq', 'time', 'blob'])
      const blob = readFileSync(join(store.sessionsDir, 'b', 'blobs', `${stub.blob.sha256}.json`))
      expect(blob.length).toBe(stub.blob.bytes)
      expect(JSON.stringify(JSON.parse(blob.toString()))).toBe(
        JSON.stringify(handle.session.events[stub.seq]),
      )
    }
    expect(lines.every((l) => Buffer.byteLength(l) <= 4096)).toBe(true)
    expect((await store.list())[0]).toMatchObject({ id: 'b', eventCount: N })
    // over the maximum event size: refused before commit
    const small = new JsonlStore({ home: home(), maxLineBytes: 1000, maxEventBytes: 3000 })
    const h2 = await small.create({ id: 'c' })
    const tooBig = () =>
      h2.session.append('developer/message', {
        message: { role: 'developer', content: [{ type: 'text', text: 'é'.repeat(1600) }] },
      })
    expect(tooBig).toThrow(expect.objectContaining({ code: 'EVENT_TOO_LARGE' }))
    expect(h2.session.nextSeq).toBe(0)
    await h2.close()
  })
})

describe('jsonl one writer', () => {
  it('a writer whose lock was deleted fails with CONCURRENT_APPEND; the other writer and the log stay intact', async () => {
    const h = home()
    const a = new JsonlStore({ home: h })
    await stored(a)
    const handleA = await a.open('s')
    appendSampleTurn(handleA.session, 'a1')
    await handleA.flush()
    rmSync(lockOf(a)) // the documented recovery for a stale lock, applied to a live one
    // writer B, a real second process, opens and appends a turn
    const b = runChild(['append', h, 's'])
    await exited(b.proc)
    expect(b.out.filter((l) => l.startsWith('error'))).toEqual([])
    const after = 3 * N + 8 // the child's turn has 8 events
    expect(b.out.at(-1)).toBe(`ack ${after}`)
    appendSampleTurn(handleA.session, 'a2')
    const error = await failure(handleA.flush())
    expect(error.code).toBe('CONCURRENT_APPEND')
    expect(error.message).toContain('another process wrote to it')
    await handleA.close().catch(() => undefined)
    const loaded = await new JsonlStore({ home: h }).load('s')
    expect(loaded.nextSeq).toBe(after)
    expect(loaded.events.map((e) => e.seq)).toEqual(loaded.events.map((_, i) => i))
  }, 60_000)

  it('refuses to write once its lock is no longer its own, even before the other writer wrote', async () => {
    const h = home()
    const a = new JsonlStore({ home: h })
    await stored(a)
    const handleA = await a.open('s')
    rmSync(lockOf(a))
    const handleB = await new JsonlStore({ home: h }).open('s')
    appendSampleTurn(handleA.session, 'a')
    const error = await failure(handleA.flush())
    expect(error.code).toBe('CONCURRENT_APPEND')
    expect(error.message).toContain('no longer this writer')
    appendSampleTurn(handleB.session, 'b')
    await handleB.close()
    await handleA.close().catch(() => undefined)
    expect(existsSync(lockOf(a))).toBe(false)
    expect((await a.load('s')).nextSeq).toBe(3 * N)
  })
})

describe('jsonl stale locks', () => {
  const lockRecord = (fields: Record<string, unknown>) =>
    JSON.stringify({ host: HOST, since: 1, nonce: 'feedfacefeedface', ...fields })

  it('takes over a lock whose pid is now the opener itself (another start time)', async (ctx) => {
    if (!hasProc) return ctx.skip('no /proc: start times cannot be read on this OS')
    const store = new JsonlStore({ home: home() })
    await stored(store)
    writeFileSync(lockOf(store), lockRecord({ pid: process.pid, boot: bootId(), start: 1 }))
    const handle = await store.open('s')
    expect(handle.notices.map((n) => n.message).join()).toContain('its pid is now this process')
    await handle.close()
    // an old-format lock (no start time) of our own pid that this process never took
    writeFileSync(lockOf(store), lockRecord({ pid: process.pid }))
    const again = await store.open('s')
    expect(again.notices.map((n) => n.code)).toEqual(['STALE_LOCK_TAKEN_OVER'])
    await again.close()
  })

  it('takes over a lock whose pid is reused by another live process; refuses the live holder itself', async (ctx) => {
    if (!hasProc) return ctx.skip('no /proc: start times cannot be read on this OS')
    const store = new JsonlStore({ home: home() })
    await stored(store)
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'])
    try {
      await new Promise((resolve) => sleeper.once('spawn', resolve))
      const stat = readFileSync(`/proc/${sleeper.pid}/stat`, 'utf8')
      const start = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19])
      writeFileSync(lockOf(store), lockRecord({ pid: sleeper.pid, boot: bootId(), start: start - 1 }))
      const handle = await store.open('s')
      expect(handle.notices.map((n) => n.code)).toEqual(['STALE_LOCK_TAKEN_OVER'])
      await handle.close()
      writeFileSync(lockOf(store), lockRecord({ pid: sleeper.pid, boot: bootId(), start }))
      const live = await failure(store.open('s'))
      expect(live.code).toBe('SESSION_LOCKED')
      // a lock from before a reboot is stale even if the pid now runs
      writeFileSync(lockOf(store), lockRecord({ pid: sleeper.pid, boot: 'another-boot', start }))
      const rebooted = await store.open('s')
      expect(rebooted.notices.map((n) => n.code)).toEqual(['STALE_LOCK_TAKEN_OVER'])
      await rebooted.close()
    } finally {
      sleeper.kill('SIGKILL')
    }
  })

  it('refuses a lock of this host name held in another pid namespace (a container), pointing to unlock', async (ctx) => {
    if (!hasProc) return ctx.skip('no /proc: pid namespaces cannot be read on this OS')
    const store = new JsonlStore({ home: home() })
    await stored(store)
    writeFileSync(lockOf(store), lockRecord({ pid: 999_999, boot: bootId(), start: 5, pidns: 'pid:[1]' }))
    const error = await failure(store.open('s'))
    expect(error.code).toBe('SESSION_LOCKED')
    expect(error.message).toContain('another pid namespace')
    expect(error.message).toContain('keel sessions unlock s')
    expect(await store.unlock('s')).toMatchObject({ removed: true })
    await (await store.open('s')).close()
  })

  it('takes over an empty lock (a power loss before it reached the disk)', async () => {
    const store = new JsonlStore({ home: home() })
    await stored(store)
    writeFileSync(lockOf(store), '')
    const handle = await store.open('s')
    expect(handle.notices.map((n) => n.code)).toEqual(['STALE_LOCK_TAKEN_OVER'])
    expect(handle.notices[0]!.message).toContain('empty or unreadable')
    const lock = JSON.parse(readFileSync(lockOf(store), 'utf8'))
    expect(lock).toMatchObject({ pid: process.pid, host: HOST })
    if (hasProc)
      expect(lock).toMatchObject({ boot: bootId(), start: expect.any(Number), pidns: expect.any(String) })
    await handle.close()
  })

  it('reports a lock of another host with the host and `keel sessions unlock`, which removes it', async () => {
    const h = home()
    const store = new JsonlStore({ home: h })
    await stored(store)
    writeFileSync(lockOf(store), lockRecord({ pid: 4242, host: 'build-7.example' }))
    const error = await failure(store.open('s'))
    expect(error.code).toBe('SESSION_LOCKED')
    expect(error.details.holder).toMatchObject({ host: 'build-7.example', pid: 4242 })
    expect(error.message).toContain('keel sessions unlock s')
    expect(await store.unlock('s')).toEqual({
      removed: true,
      holder: { pid: 4242, host: 'build-7.example', since: 1 },
    })
    expect(await store.unlock('s')).toEqual({ removed: false })
    const handle = await store.open('s')
    // a live lock of this host is not broken by hand
    expect((await failure(new JsonlStore({ home: h }).unlock('s'))).code).toBe('SESSION_LOCKED')
    await handle.close()
  })
})

describe('jsonl create races and leftovers', () => {
  it('the losers of a create race get SESSION_EXISTS', async () => {
    const h = home()
    for (const id of ['c1', 'c2', 'c3']) {
      const racers = [runChild(['create', h, id]), runChild(['create', h, id]), runChild(['create', h, id])]
      await Promise.all(racers.map((r) => exited(r.proc)))
      const results = racers.map((r) => r.out[0]).sort()
      expect(results).toEqual(['error SESSION_EXISTS', 'error SESSION_EXISTS', 'won'])
    }
  }, 60_000)

  it('create while another process is creating the same id (its lock held, no log yet) gives SESSION_EXISTS', async (ctx) => {
    if (!hasProc) return ctx.skip('no /proc: start times cannot be read on this OS')
    const store = new JsonlStore({ home: home() })
    const creator = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'])
    try {
      await new Promise((resolve) => sleeper(creator, resolve))
      const stat = readFileSync(`/proc/${creator.pid}/stat`, 'utf8')
      const start = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19])
      mkdirSync(join(store.sessionsDir, 'mid'), { recursive: true })
      writeFileSync(
        lockOf(store, 'mid'),
        JSON.stringify({ pid: creator.pid, host: HOST, since: 1, nonce: 'ab', boot: bootId(), start }),
      )
      const error = await failure(store.create({ id: 'mid' }))
      expect(error.code).toBe('SESSION_EXISTS')
    } finally {
      creator.kill('SIGKILL')
    }
  })

  it('removes temp files left by killed processes (older than the age limit) on open and list', async () => {
    const h = home()
    const store = new JsonlStore({ home: h })
    await stored(store)
    const dir = join(store.sessionsDir, 's')
    const old = [
      '.session.jsonl.0a1b2c.tmp',
      'writer.lock.0011223344556677.tmp',
      'writer.lock.stale.8899aabbccddeeff',
    ]
    const young = '.session.jsonl.ffffff.tmp'
    mkdirSync(join(dir, 'blobs'))
    const oldBlob = `${'a'.repeat(64)}.json.123456.tmp`
    for (const name of [...old, young]) writeFileSync(join(dir, name), 'partial')
    writeFileSync(join(dir, 'blobs', oldBlob), 'partial')
    const past = new Date(Date.now() - 60 * 60 * 1000)
    for (const name of old) utimesSync(join(dir, name), past, past)
    utimesSync(join(dir, 'blobs', oldBlob), past, past)
    // a killed create: a folder with only a temp file
    const orphan = join(store.sessionsDir, 'orphan')
    mkdirSync(orphan)
    writeFileSync(join(orphan, '.session.jsonl.abcdef.tmp'), 'x')
    utimesSync(join(orphan, '.session.jsonl.abcdef.tmp'), past, past)
    expect((await store.list()).map((s) => s.id)).toEqual(['s'])
    expect(readdirSync(dir).sort()).toEqual(['blobs', young, 'session.chain', 'session.jsonl'].sort())
    expect(readdirSync(join(dir, 'blobs'))).toEqual([])
    expect(existsSync(orphan)).toBe(false)
    utimesSync(join(dir, young), past, past)
    const handle = await store.open('s')
    await handle.close()
    expect(existsSync(join(dir, young))).toBe(false)
  })

  it('kills during create/fork leave no leftovers after the age limit passes', async () => {
    const h = home()
    const store = new JsonlStore({ home: h })
    await stored(store, 'parent', 30)
    for (let i = 0; i < 8; i++) {
      const proc = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          '-e',
          `import('${new URL('../src/index.ts', import.meta.url).pathname}').then(async ({ JsonlStore }) => { const s = new JsonlStore({ home: ${JSON.stringify(h)} }); for (let i = 0; ; i++) { const c = await s.fork('parent', { childId: 'k${i}-' + i }); await c.close(); process.stdout.write('forked\\n') } })`,
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      )
      let forks = 0
      proc.stdout!.on('data', (chunk: Buffer) => {
        forks += chunk.toString().split('\n').length - 1
      })
      // kill it mid-fork: once it is forking, after a varying delay
      await expect.poll(() => forks, { timeout: 30_000, interval: 20 }).toBeGreaterThan(0)
      await new Promise((r) => setTimeout(r, (i * 37) % 120))
      proc.kill('SIGKILL')
      await exited(proc)
    }
    const sessions = readdirSync(join(h, 'sessions'))
    // every surviving folder is a loadable session or only leftovers; list removes leftovers once old
    const fresh = new JsonlStore({ home: h, leftoverAgeMs: 0 })
    const listed = (await fresh.list({ limit: 10_000 })).map((s) => s.id)
    for (const id of readdirSync(join(h, 'sessions'))) {
      const names = readdirSync(join(h, 'sessions', id))
      expect(names.filter((n) => n.endsWith('.tmp') || n.includes('.stale.'))).toEqual([])
      // a folder whose create was killed before the log was linked is gone
      expect(names).toContain('session.jsonl')
      expect(listed).toContain(id)
    }
    expect(sessions.length).toBeGreaterThan(1)
  }, 60_000)
})

describe('jsonl OS errors (tiny tmpfs)', () => {
  const mounts: string[] = []
  afterEach(() => {
    for (const m of mounts.splice(0)) spawnSync('umount', ['-l', m])
  })
  const tmpfs = (ctx: { skip: (reason: string) => void }, size: string): string | undefined => {
    const dir = home()
    const result = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir])
    if (result.status !== 0) {
      const reason = `cannot mount a tmpfs here (${result.stderr.toString().trim() || 'not root'}); skipped`
      console.warn(reason)
      ctx.skip(reason)
      return undefined
    }
    mounts.push(dir)
    return dir
  }

  it('create on a full disk gives STORE_IO_FAILED ENOSPC and leaves no partial file or folder', async (ctx) => {
    const dir = tmpfs(ctx, '256k')
    if (!dir) return
    const store = new JsonlStore({ home: dir })
    await stored(store, 'small', 1)
    const big = await new JsonlStore({ home: home() }).create({ id: 'big' })
    for (let i = 0; i < 40; i++) appendSampleTurn(big.session, 'z'.repeat(2000))
    await big.close()
    const error = await failure(store.create({ from: big.session }))
    expect(error.code).toBe('STORE_IO_FAILED')
    expect(error.details.errno).toBe('ENOSPC')
    expect(readdirSync(join(dir, 'sessions'))).toEqual(['small'])
    expect(readdirSync(join(dir, 'sessions', 'small')).sort()).toEqual(['session.chain', 'session.jsonl'])
    expect((await store.load('small')).nextSeq).toBe(N)
  })

  it('create with no file descriptor left gives STORE_IO_FAILED EMFILE and leaves no empty folder', async () => {
    const h = home()
    const store = new JsonlStore({ home: h })
    await stored(store, 'kept', 1)
    const run = runChild(['emfile', h, 'new'], { shell: 'ulimit -n 256' })
    await exited(run.proc)
    expect(run.out).toEqual(['error STORE_IO_FAILED EMFILE'])
    expect(readdirSync(join(h, 'sessions'))).toEqual(['kept'])
    expect(readdirSync(join(h, 'sessions', 'kept')).sort()).toEqual(['session.chain', 'session.jsonl'])
  }, 60_000)

  it('create on a read-only file system gives STORE_IO_FAILED EROFS and leaves no empty folder', async (ctx) => {
    const dir = tmpfs(ctx, '1m')
    if (!dir) return
    const store = new JsonlStore({ home: dir })
    await stored(store, 'kept', 1)
    expect(spawnSync('mount', ['-o', 'remount,ro', dir]).status).toBe(0)
    const error = await failure(store.create({ id: 'new' }))
    expect(error.code).toBe('STORE_IO_FAILED')
    expect(error.details.errno).toBe('EROFS')
    expect(readdirSync(join(dir, 'sessions'))).toEqual(['kept'])
    const opened = await failure(store.open('kept'))
    expect(opened.code).toBe('STORE_IO_FAILED')
    expect((await store.load('kept')).nextSeq).toBe(N)
  })
})
