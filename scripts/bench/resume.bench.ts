// `pnpm bench resume [--quick]`: resuming long JSONL sessions (10k, 100k and 1M events;
// --quick: 10k and 100k) and replaying one in full, each phase in a fresh process (so its
// peak RSS is its own), every plugin's projections registered as in `keel`:
//   resume   `store.open` + `deriveMessages()` + every registered projection: ready to send.
//            Baseline: reading the same checkpoint file and the log's tail and JSON.parse of
//            both — the bytes a resume must read, without locking, checking or folding.
//   replay   `store.load` without the checkpoint (every line read, its integrity record's
//            CRC checked, envelope/lifecycle/surface folded). Baseline: a chunked read of
//            the file and JSON.parse of every line, kept in an array.
import { spawnSync } from 'node:child_process'
import { closeSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import '@keel/presets'
import { registeredProjections } from '@keel/session'
import { JsonlStore } from '@keel/store-jsonl'
import { writeBigSession } from './big-session.js'
import { type Goal, printGoals } from './goals.js'

const self = fileURLToPath(import.meta.url)
const [phase, home, id] = process.argv.slice(2)
const secs = (ns: bigint) => Number(ns) / 1e9
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {})

function runPhase(name: string, ...rest: string[]): Record<string, number> {
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--expose-gc', self, name, ...rest], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  if (result.status !== 0) throw new Error(`phase ${name} failed (${result.status ?? result.signal})`)
  return JSON.parse(result.stdout.trim().split('\n').pop()!) as Record<string, number>
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** `run` three times in fresh processes; the run of median time. */
function medianOf(name: string, ...rest: string[]): Record<string, number> {
  const runs = [0, 1, 2].map(() => runPhase(name, ...rest))
  const m = median(runs.map((r) => r.seconds!))
  return runs.find((r) => r.seconds === m)!
}

async function measured<T>(
  work: () => Promise<T> | T,
): Promise<{ value: T; seconds: number; rssGrowth: number }> {
  gc()
  const before = process.memoryUsage().rss
  const t0 = process.hrtime.bigint()
  const value = await work()
  const seconds = secs(process.hrtime.bigint() - t0)
  return { value, seconds, rssGrowth: process.resourceUsage().maxRSS * 1024 - before }
}

if (phase === 'resume') {
  const { value, seconds, rssGrowth } = await measured(async () => {
    const handle = await new JsonlStore({ home: home! }).open(id!)
    const messages = handle.session.deriveMessages()
    for (const p of registeredProjections()) handle.session.project(p)
    return { handle, messages }
  })
  const { session } = value.handle
  const surfaceBytes = Buffer.byteLength(JSON.stringify(value.messages))
  const out = {
    seconds,
    rssGrowth,
    surfaceBytes,
    residentFrom: session.residentFrom,
    events: session.nextSeq,
  }
  await value.handle.close()
  console.log(JSON.stringify(out))
} else if (phase === 'read-checkpoint') {
  const dir = join(home!, 'sessions', id!)
  const { seconds, rssGrowth, value } = await measured(() => {
    const text = readFileSync(join(dir, 'session.checkpoint'), 'utf8')
    const doc = JSON.parse(text.slice(text.indexOf('\n') + 1)) as { locator: { end: number } }
    const file = join(dir, 'session.jsonl')
    const fd = openSync(file, 'r')
    const tail = Buffer.allocUnsafe(statSync(file).size - doc.locator.end)
    readSync(fd, tail, 0, tail.length, doc.locator.end)
    closeSync(fd)
    const lines = tail
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== '')
    return lines.map((l) => JSON.parse(l) as unknown).length + (doc ? 1 : 0)
  })
  console.log(JSON.stringify({ seconds, rssGrowth, tail: value - 1 }))
} else if (phase === 'replay') {
  const { seconds, rssGrowth, value } = await measured(async () => {
    const session = await new JsonlStore({ home: home!, checkpoints: false }).load(id!)
    session.deriveMessages()
    return session.nextSeq
  })
  console.log(JSON.stringify({ seconds, rssGrowth, events: value }))
} else if (phase === 'parse') {
  const { seconds, rssGrowth, value } = await measured(() =>
    chunkedParse(join(home!, 'sessions', id!, 'session.jsonl')),
  )
  console.log(JSON.stringify({ seconds, rssGrowth, events: value.length - 1 }))
} else {
  const quick = process.argv.includes('--quick')
  const sizes = quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000]
  const resumes: Record<number, Record<string, number>> = {}
  const goals: Goal[] = []
  const root = mkdtempSync(join(tmpdir(), 'keel-bench-resume-'))
  try {
    for (const size of sizes) {
      const h = join(root, String(size))
      const { file, events } = writeBigSession(h, 'big', { events: size, compactEvery: 50, keep: 2000 })
      const t0 = process.hrtime.bigint()
      // the first open validates every line; its close writes the integrity records and a checkpoint
      await (await new JsonlStore({ home: h }).open('big')).close()
      const prepared = secs(process.hrtime.bigint() - t0)
      const resume = medianOf('resume', h, 'big')
      const read = medianOf('read-checkpoint', h, 'big')
      resumes[size] = resume
      if (resume.residentFrom !== events)
        throw new Error(`the resume of ${events} events did not use the checkpoint`)
      console.log(
        `${events} events (${mib(statSync(file).size)} log, checkpoint ${mib(statSync(join(h, 'sessions', 'big', 'session.checkpoint')).size)}, surface ${mib(resume.surfaceBytes!)}; first open + close ${prepared.toFixed(1)} s):`,
      )
      console.log(
        `  resume to ready-to-send ${(resume.seconds! * 1000).toFixed(0)} ms, peak RSS growth ${mib(resume.rssGrowth!)}; reading checkpoint + tail (${read.tail} lines) ${(read.seconds! * 1000).toFixed(0)} ms -> ${(resume.seconds! / read.seconds!).toFixed(2)}x (median of 3)`,
      )
      if (size === sizes[sizes.length - 1]) {
        const replay = medianOf('replay', h, 'big')
        const parse = medianOf('parse', h, 'big')
        if (replay.events !== events || parse.events !== events)
          throw new Error('replay and parse disagree on the events')
        console.log(
          `  full verified replay ${replay.seconds!.toFixed(2)} s (peak RSS growth ${mib(replay.rssGrowth!)}); chunked read + JSON.parse ${parse.seconds!.toFixed(2)} s (${mib(parse.rssGrowth!)}) -> ${(replay.seconds! / parse.seconds!).toFixed(2)}x`,
        )
        goals.push(
          { name: `resume ${events} events to ready-to-send`, value: resume.seconds!, limit: 0.5, unit: 's' },
          { name: 'resume / reading checkpoint + tail', value: resume.seconds! / read.seconds!, limit: 1.5 },
          {
            name: 'resume peak RSS growth / surface size',
            value: resume.rssGrowth! / resume.surfaceBytes!,
            limit: 2,
          },
          {
            name: 'full verified replay / chunked read + JSON.parse',
            value: replay.seconds! / parse.seconds!,
            limit: 1.2,
          },
        )
      }
      rmSync(h, { recursive: true, force: true })
    }
    const largest = sizes[sizes.length - 1]!
    goals.push({
      name: `resume ${largest / 1000}k / resume 10k (flat)`,
      value: resumes[largest]!.seconds! / resumes[10_000]!.seconds!,
      limit: 2,
    })
    if (quick) console.log('(--quick: the 1M-event case was not run)')
    printGoals(goals)
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

/** Reads `file` in 1 MiB chunks, decoding each up to its last newline, and parses every line. */
function chunkedParse(file: string): unknown[] {
  const fd = openSync(file, 'r')
  const out: unknown[] = []
  try {
    let carry = Buffer.alloc(0)
    for (let pos = 0; ; ) {
      const buf = Buffer.allocUnsafe(carry.length + (1 << 20))
      carry.copy(buf)
      const n = readSync(fd, buf, carry.length, 1 << 20, pos)
      if (n === 0) break
      pos += n
      const end = buf.lastIndexOf(10, carry.length + n - 1) + 1
      const text = buf.toString('utf8', 0, end)
      let at = 0
      for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', at)) {
        out.push(JSON.parse(text.slice(at, nl)))
        at = nl + 1
      }
      carry = Buffer.from(buf.subarray(end, carry.length + n))
    }
  } finally {
    closeSync(fd)
  }
  return out
}
