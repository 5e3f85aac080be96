import { spawn, spawnSync } from 'node:child_process'
import { appendFileSync, existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { registerEvents, type Session } from '@keel/session'
import { appendSampleTurn } from '@keel/store-testkit'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { JsonlStore } from '../src/index.js'
import { exited, homesRemovedAfterEach } from './helpers.js'

const writer = fileURLToPath(new URL('./fixtures/writer.ts', import.meta.url))
const home = homesRemovedAfterEach()
const hasStrace = spawnSync('strace', ['-V']).status === 0

/** What two loads of one log must agree on. */
const observed = (s: Session) => ({
  events: JSON.parse(JSON.stringify(s.events)) as unknown,
  messages: s.deriveMessages(),
  openTurn: s.openTurn,
  checkpoint: s.checkpoint(),
})

describe('jsonl write path', () => {
  it.skipIf(!hasStrace && !process.env.CI)(
    'writes at flush points only: one fdatasync per flush, none while a tool runs, no read of writer.lock',
    async () => {
      const h = home()
      const created = await new JsonlStore({ home: h }).create({ id: 's' })
      appendSampleTurn(created.session)
      await created.close()
      const trace = join(h, 'trace.txt')
      const traced = spawnSync(
        'strace',
        [
          '-f',
          '-qq',
          '-e',
          'trace=openat,fsync,fdatasync,write',
          '-o',
          trace,
          process.execPath,
          '--import',
          'tsx',
          writer,
          'turn',
          h,
          's',
        ],
        { encoding: 'utf8' },
      )
      // strace itself must run here: in CI it is installed (scripts/ci/install-tools.sh)
      expect(traced.error).toBeUndefined()
      expect(traced.stdout).toContain('ack')
      const lines = readFileSync(trace, 'utf8').split('\n')
      const log = join(h, 'sessions', 's', 'session.jsonl')
      const fd = openedFd(lines, log)
      expect(fd).toBeDefined()
      const from = lines.findIndex((l) => l.includes('turn-begin'))
      const to = lines.findIndex((l) => l.includes('turn-end'))
      expect(from).toBeGreaterThan(0)
      const turn = lines.slice(from, to)
      // three flush points (two model calls, the turn end): three writes and three fdatasyncs
      expect(turn.filter((l) => new RegExp(`\\bfdatasync\\(${fd}\\b`).test(l))).toHaveLength(3)
      expect(turn.filter((l) => new RegExp(`\\bwrite\\(${fd},`).test(l))).toHaveLength(3)
      expect(turn.filter((l) => /\bfsync\(/.test(l))).toEqual([])
      expect(turn.filter((l) => l.includes('writer.lock'))).toEqual([])
    },
    60_000,
  )
})

/**
 * The fd of the last O_APPEND open of `path` in an `strace -f` trace. The open may run on a
 * libuv thread while others run too: strace then splits it into `… <unfinished ...>` and a
 * later `<pid> <... openat resumed>) = fd` line of the same thread.
 */
function openedFd(lines: readonly string[], path: string): string | undefined {
  let fd: string | undefined
  lines.forEach((line, i) => {
    if (!line.includes(`"${path}"`) || !line.includes('O_APPEND')) return
    const done = /= (\d+)$/.exec(line)?.[1]
    if (done !== undefined) {
      fd = done
      return
    }
    const pid = line.split(' ')[0]
    const resumed = lines.slice(i + 1).find((l) => l.startsWith(`${pid} `) && l.includes('openat resumed>'))
    fd = /= (\d+)$/.exec(resumed ?? '')?.[1] ?? fd
  })
  return fd
}

describe('jsonl checkpoints under SIGKILL', () => {
  it('a SIGKILL while a checkpoint is being written leaves the session resumable', async () => {
    const h = home()
    const dir = join(h, 'sessions', 's')
    const partial = () =>
      existsSync(dir) ? readdirSync(dir).filter((n) => /^\.session\.checkpoint\..+\.tmp$/.test(n)) : []
    let caught = 0
    for (let round = 0; round < 10 && caught < 2; round++) {
      const proc = spawn(process.execPath, ['--import', 'tsx', writer, 'checkpoints', h, 's'], {
        stdio: ['ignore', 'pipe', 'inherit'],
      })
      const acks: number[] = []
      proc.stdout.on('data', (chunk: Buffer) => {
        for (const m of chunk.toString().matchAll(/ack (\d+)/g)) acks.push(Number(m[1]))
      })
      const before = new Set(partial())
      // kill the moment a checkpoint's temp file appears: it is being written
      await new Promise<void>((resolve) => {
        const poll = () => {
          if (proc.exitCode !== null) return resolve()
          if (acks.length > 2 && partial().some((n) => !before.has(n))) {
            proc.kill('SIGKILL')
            return resolve()
          }
          setImmediate(poll)
        }
        poll()
      })
      await exited(proc)
      if (partial().some((n) => !before.has(n))) caught++
      const resumed = await new JsonlStore({ home: h }).load('s')
      const replayed = await new JsonlStore({ home: h, checkpoints: false }).load('s')
      expect(resumed.nextSeq).toBeGreaterThanOrEqual(acks.at(-1) ?? 0)
      expect(observed(resumed)).toEqual(observed(replayed))
    }
    expect(caught).toBeGreaterThan(0)
    // the next writer removes the partial checkpoints once they are old enough
    const handle = await new JsonlStore({ home: h, leftoverAgeMs: 0 }).open('s')
    await handle.close()
    expect(partial()).toEqual([])
  }, 120_000)
})

let schemaRuns = 0
registerEvents('@keel/test-counted', {
  'test/counted': z.strictObject({ n: z.number() }).refine(() => {
    schemaRuns++
    return true
  }),
} as never)

describe('jsonl loads of what the store wrote', () => {
  it('skip the schema of lines its records cover; lines of another writer and uncovered ones are checked', async () => {
    const h = home()
    const store = new JsonlStore({ home: h, checkpoints: false })
    const handle = await store.create({ id: 'c' })
    for (let n = 0; n < 50; n++) handle.session.append('test/counted' as never, { n } as never)
    await handle.close()
    schemaRuns = 0
    expect((await store.load('c')).nextSeq).toBe(50)
    expect(schemaRuns).toBe(0)
    // without its records (a log of an older build) every line is checked
    const dir = join(h, 'sessions', 'c')
    rmSync(join(dir, 'session.chain'))
    await store.load('c')
    expect(schemaRuns).toBe(50)
    // the next writer validates them on open and covers them again
    await (await store.open('c')).close()
    schemaRuns = 0
    await store.load('c')
    expect(schemaRuns).toBe(0)
    // lines another program appended are checked, the rest still is not
    const more = [50, 51, 52].map((n) =>
      JSON.stringify({ type: 'test/counted', seq: n, time: 1, data: { n } }),
    )
    appendFileSync(join(dir, 'session.jsonl'), more.map((l) => `${l}\n`).join(''))
    expect((await store.load('c')).nextSeq).toBe(53)
    expect(schemaRuns).toBe(3)
  })
})
