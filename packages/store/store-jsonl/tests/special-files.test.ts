// Session files replaced by things that are not regular files — a directory, a FIFO, a
// device, a loop of symbolic links, a sparse file far past its header's length — as another
// process or a careless `mkfifo` may leave them. Each open runs in a child process: a FIFO
// blocks `open(2)` and a device reads without end, which would stall this test's own thread.
import { execFileSync, spawn } from 'node:child_process'
import {
  cpSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { tempHome } from './helpers.js'

const probe = fileURLToPath(new URL('./fixtures/open-probe.ts', import.meta.url))
/** Far longer than any probe takes; a probe still running then is hung (blocked or spinning). */
const HUNG_MS = 30_000

type Fact = {
  ok: boolean
  code?: string
  message?: string
  residentFrom?: number
  nextSeq?: number
  maxRssBytes: number
}
type Notice = { code: string; message: string }

function runProbe(
  op: string,
  home: string,
  id = 's',
): Promise<Fact & { notices?: Notice[]; ids?: string[] }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', probe, op, home, id], {
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let out = ''
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString()
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), HUNG_MS)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      if (signal === 'SIGKILL') reject(new Error(`${op} hung (killed after ${HUNG_MS} ms)`))
      else if (code !== 0) reject(new Error(`${op} exited ${code}: ${out}`))
      else resolve(JSON.parse(out.trim().split('\n').pop()!))
    })
  })
}

const KINDS = {
  directory: (path: string) => mkdirSync(path),
  FIFO: (path: string) => execFileSync('mkfifo', [path]),
  'character device': (path: string) => symlinkSync('/dev/zero', path),
  'loop of symbolic links': (path: string) => symlinkSync(path, path),
} as const

let base: string
const homes: string[] = []

/** A copy of the base home with `change` done in the folder of session `s`. */
function homeChanged(change: (dir: string) => void): string {
  const home = tempHome()
  homes.push(home)
  cpSync(base, home, { recursive: true })
  change(join(home, 'sessions', 's'))
  return home
}

/** A copy of the base home with `file` of session `s` replaced by what `make` puts at its path. */
function homeWith(file: string, make: (path: string) => void): string {
  return homeChanged((dir) => {
    rmSync(join(dir, file), { force: true })
    make(join(dir, file))
  })
}

/** Peak memory of a process that opens the untouched session (measured in this run). */
let openRss: number

beforeAll(async () => {
  base = tempHome()
  expect(await runProbe('create', base)).toMatchObject({ ok: true })
  openRss = (
    await runProbe(
      'open',
      homeChanged(() => {}),
    )
  ).maxRssBytes
})

/** What refusing a run of bytes without a newline may cost beyond an ordinary open: its search buffers, never the bytes. */
const SEARCH_MEMORY = 64 * 1024 * 1024

afterAll(() => {
  for (const home of [base, ...homes]) rmSync(home, { recursive: true, force: true })
})

describe.concurrent('a session file that is not a regular file', () => {
  it('(the untouched session resumes from its checkpoint)', async () => {
    const fact = await runProbe(
      'open',
      homeChanged(() => {}),
    )
    expect(fact).toMatchObject({ ok: true, notices: [] })
    expect(fact.residentFrom).toBe(fact.nextSeq)
  })

  for (const [what, make] of Object.entries(KINDS)) {
    it(`a checkpoint that is a ${what} is ignored with a notice: the log wins`, async () => {
      const fact = await runProbe('open', homeWith('session.checkpoint', make))
      expect(fact).toMatchObject({ ok: true, residentFrom: 0 })
      expect(fact.notices).toContainEqual({
        code: 'CHECKPOINT_IGNORED',
        message: expect.stringContaining(`it is a ${what}, not a regular file`),
      })
    })

    it(`a chain or a writer lock that is a ${what} is a typed refusal naming it, not a hang`, async () => {
      const chain = await runProbe('open', homeWith('session.chain', make))
      expect(chain).toMatchObject({ ok: false, code: 'SESSION_CORRUPT' })
      expect(chain.message).toContain(`session.chain: it is a ${what}, not a regular file`)
      const lock = await runProbe('open', homeWith('writer.lock', make))
      expect(lock).toMatchObject({ ok: false, code: 'SESSION_LOCKED' })
      expect(lock.message).toContain(`writer.lock is a ${what}, not a lock Keel writes`)
      const unlock = await runProbe('unlock', homeWith('writer.lock', make))
      expect(unlock).toMatchObject({ ok: false, code: 'SESSION_LOCKED' })
    })
  }

  for (const what of ['directory', 'FIFO', 'character device'] as const) {
    it(`a log that is a ${what} is SESSION_CORRUPT naming it, and the other sessions still list`, async () => {
      const home = homeWith('session.jsonl', KINDS[what])
      const fact = await runProbe('open', home)
      expect(fact).toMatchObject({ ok: false, code: 'SESSION_CORRUPT' })
      expect(fact.message).toContain(`session.jsonl: it is a ${what}, not a regular file`)
      cpSync(join(base, 'sessions', 's'), join(home, 'sessions', 'other'), { recursive: true })
      const other = join(home, 'sessions', 'other', 'session.jsonl')
      writeFileSync(other, readFileSync(other, 'utf8').replace('"id":"s"', '"id":"other"'))
      expect(await runProbe('list', home)).toMatchObject({ ok: true, ids: ['other'] })
    })
  }

  it('a checkpoint far longer than its header says is ignored without reading it to the end', async () => {
    // 1 TiB of holes after a real header line: read through, it would take minutes
    const home = homeWith('session.checkpoint', (path) => {
      const original = readFileSync(join(base, 'sessions', 's', 'session.checkpoint'))
      writeFileSync(path, original)
      truncateSync(path, 2 ** 40)
    })
    const fact = await runProbe('open', home)
    expect(fact).toMatchObject({ ok: true, residentFrom: 0 })
    expect(fact.notices).toContainEqual({
      code: 'CHECKPOINT_IGNORED',
      message: expect.stringContaining('it is truncated or padded'),
    })
  })
})

/** A copy of the base home with `file` of session `s` extended (sparse, zeros) to a terabyte. */
function homeExtending(file: (dir: string) => string): string {
  return homeChanged((dir) => truncateSync(file(dir), 2 ** 40))
}

describe.concurrent('a session file extended far past what it holds (zeros to a terabyte)', () => {
  it('a chain: read as far as its records hold, the session resumes from its checkpoint', async () => {
    const home = homeExtending((dir) => join(dir, 'session.chain'))
    const fact = await runProbe('open', home)
    expect(fact).toMatchObject({ ok: true, notices: [] })
    expect(fact.residentFrom).toBe(fact.nextSeq)
    expect(statSync(join(home, 'sessions', 's', 'session.chain')).size).toBeLessThan(64 * 1024) // cut back
  })

  it('a writer lock: not a lock record, taken over with a notice', async () => {
    const home = homeWith('writer.lock', (path) => {
      writeFileSync(path, '')
      truncateSync(path, 2 ** 40)
    })
    const fact = await runProbe('open', home)
    expect(fact).toMatchObject({ ok: true })
    expect(fact.notices?.map((n) => n.code)).toEqual(['STALE_LOCK_TAKEN_OVER'])
  })

  it('a log: SESSION_CORRUPT at the first line that runs past what a string can hold', async () => {
    const fact = await runProbe(
      'open',
      homeExtending((dir) => join(dir, 'session.jsonl')),
    )
    expect(fact).toMatchObject({ ok: false, code: 'SESSION_CORRUPT' })
    expect(fact.message).toMatch(/line \d+, byte \d+: the line runs past \d+ bytes without a newline/)
    expect(fact.maxRssBytes).toBeLessThan(openRss + SEARCH_MEMORY) // it kept none of the 512 MiB it searched
  })

  it('a log that is nothing but zeros: SESSION_CORRUPT at its header line', async () => {
    const home = homeWith('session.jsonl', (path) => {
      writeFileSync(path, '')
      truncateSync(path, 2 ** 40)
    })
    const fact = await runProbe('open', home)
    expect(fact).toMatchObject({ ok: false, code: 'SESSION_CORRUPT' })
    expect(fact.message).toMatch(/line 1, byte 0: the physical header line runs past \d+ bytes/)
    expect(fact.maxRssBytes).toBeLessThan(openRss + SEARCH_MEMORY)
  })

  it("a blob: SESSION_CORRUPT naming it, more than one event's JSON can be", async () => {
    const fact = await runProbe(
      'open',
      homeExtending((dir) => join(dir, 'blobs', readdirSync(join(dir, 'blobs'))[0]!)),
    )
    expect(fact).toMatchObject({ ok: false, code: 'SESSION_CORRUPT' })
    expect(fact.message).toMatch(/blobs\/[0-9a-f]{64}\.json: it is 1099511627776 bytes, more than one event/)
  })
})
