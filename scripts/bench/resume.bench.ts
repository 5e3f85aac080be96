// `pnpm bench resume [--quick]`: resuming long JSONL sessions (10k, 100k and 1M events;
// --quick: 10k and 100k; the 1M case takes a few minutes, most of it writing the session)
// and replaying the largest in full, each phase in a fresh process (so its peak RSS is its
// own), best of several runs, every plugin's projections registered as in `keel`:
//   resume   `store.open` + `deriveMessages()` + every registered projection: ready to send.
//            Baseline: reading the same checkpoint file and the log's tail and JSON.parse of
//            every line of both (the checkpoint's document, each event it holds, each tail
//            line) — the bytes a resume must read, without locking, checking or folding.
//   replay   `store.load` without the checkpoint (every line read, its integrity record's
//            CRC checked, envelope/lifecycle/surface folded). Baseline: a chunked read of
//            the file and JSON.parse of every line, kept in an array.
// `prepare <home> <events>` writes one session to run a phase on alone, e.g. under --cpu-prof:
//   node --import tsx --expose-gc scripts/bench/resume.bench.ts resume <home> big
// Ratios are of CPU time: the machine is shared, and its wall time measures the other jobs
// too. Wall times are printed beside them; the 0.5 s goal is wall time.
// `--replay-only[=N]`: only the replay phase and its baseline, of one N-event session
// (default 1M; e.g. 200000 for quick iterations).
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
const ms = (seconds: number) => `${(seconds * 1000).toFixed(0)} ms`
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {})

type Result = Record<string, number>

function runPhase(name: string, ...rest: string[]): Result {
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--expose-gc', self, name, ...rest], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  if (result.status !== 0) throw new Error(`phase ${name} failed (${result.status ?? result.signal})`)
  return JSON.parse(result.stdout.trim().split('\n').pop()!) as Result
}

/** `name` in `runs` fresh processes: the run of least CPU time, with the least wall time of all. */
function bestOf(runs: number, name: string, ...rest: string[]): Result {
  const all = Array.from({ length: runs }, () => runPhase(name, ...rest))
  const best = all.reduce((a, b) => (b.cpu! < a.cpu! ? b : a))
  return { ...best, seconds: Math.min(...all.map((r) => r.seconds!)) }
}

async function measured<T>(work: () => Promise<T> | T): Promise<{ value: T; figures: Result }> {
  gc()
  const before = process.memoryUsage().rss
  const cpu0 = process.cpuUsage()
  const t0 = process.hrtime.bigint()
  const value = await work()
  const seconds = secs(process.hrtime.bigint() - t0)
  const used = process.cpuUsage(cpu0)
  const rssGrowth = process.resourceUsage().maxRSS * 1024 - before
  return { value, figures: { seconds, cpu: (used.user + used.system) / 1e6, rssGrowth } }
}

/**
 * Opening the session until it is ready to send: open, the messages, every registered
 * projection. The messages are returned to be sized after the measurement (sizing them is
 * the benchmark's, not the resume's).
 */
async function resume(): Promise<{ messages: unknown; residentFrom: number; events: number }> {
  const handle = await new JsonlStore({ home: home! }).open(id!)
  const messages = handle.session.deriveMessages()
  for (const p of registeredProjections()) handle.session.project(p)
  const ready = { messages, residentFrom: handle.session.residentFrom, events: handle.session.nextSeq }
  await handle.close()
  return ready
}

if (phase === 'resume' || phase === 'resume-warm') {
  if (phase === 'resume-warm') await resume() // compiled once: what a long-running process pays
  const { value, figures } = await measured(resume)
  const { messages, ...rest } = value
  console.log(
    JSON.stringify({ ...figures, ...rest, surfaceBytes: Buffer.byteLength(JSON.stringify(messages)) }),
  )
} else if (phase === 'read-checkpoint') {
  const dir = join(home!, 'sessions', id!)
  const { value, figures } = await measured(() => {
    // the checkpoint's body: the document, then one line per event it holds
    const text = readFileSync(join(dir, 'session.checkpoint'), 'utf8')
    const [first, ...held] = text.slice(text.indexOf('\n') + 1).split('\n')
    const doc = JSON.parse(first!) as { locator: { end: number }; state: { events?: unknown[] } }
    doc.state.events = held.map((l) => JSON.parse(l) as unknown)
    const file = join(dir, 'session.jsonl')
    const fd = openSync(file, 'r')
    const tail = Buffer.allocUnsafe(statSync(file).size - doc.locator.end)
    readSync(fd, tail, 0, tail.length, doc.locator.end)
    closeSync(fd)
    const lines = tail
      .toString('utf8')
      .split('\n')
      .filter((l) => l !== '')
    return lines.map((l) => JSON.parse(l) as unknown).length
  })
  console.log(JSON.stringify({ ...figures, tail: value }))
} else if (phase === 'replay') {
  const { value, figures } = await measured(async () => {
    const session = await new JsonlStore({ home: home!, checkpoints: false }).load(id!)
    session.deriveMessages()
    return session.nextSeq
  })
  console.log(JSON.stringify({ ...figures, events: value }))
} else if (phase === 'parse') {
  const { value, figures } = await measured(() => chunkedParse(join(home!, 'sessions', id!, 'session.jsonl')))
  console.log(JSON.stringify({ ...figures, events: value.length - 1 }))
} else if (phase === 'prepare') {
  // `prepare <home> <events>`: writes a session and its checkpoint to iterate on one phase
  const { events } = writeBigSession(home!, 'big', { events: Number(id), compactEvery: 50, keep: 2000 })
  await (await new JsonlStore({ home: home! }).open('big')).close()
  console.log(
    `${events} events in ${join(home!, 'sessions', 'big')}; run a phase: resume|resume-warm|read-checkpoint ${home} big`,
  )
} else {
  const only = process.argv.find((a) => a === '--replay-only' || a.startsWith('--replay-only='))
  if (only) await replayOnly(only.includes('=') ? Number(only.split('=')[1]) : 1_000_000)
  else await main(process.argv.includes('--quick'))
}

/** The replay phase and its baseline alone, of one session of `size` events. */
async function replayOnly(size: number): Promise<void> {
  if (!Number.isSafeInteger(size) || size <= 0) throw new Error(`--replay-only=${size}: a positive count`)
  const root = mkdtempSync(join(tmpdir(), 'keel-bench-replay-'))
  try {
    const { file, events } = writeBigSession(root, 'big', { events: size, compactEvery: 50, keep: 2000 })
    await (await new JsonlStore({ home: root }).open('big')).close()
    console.log(`${events} events (${mib(statSync(file).size)} log):`)
    const replay = replayLine(root, events)
    printGoals([{ name: 'full verified replay / chunked read + JSON.parse', value: replay, limit: 1.2 }])
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

/** Runs the replay phase and its baseline (best of 3 each), prints them; returns the CPU ratio. */
function replayLine(h: string, events: number): number {
  const replay = bestOf(3, 'replay', h, 'big')
  const parse = bestOf(3, 'parse', h, 'big')
  if (replay.events !== events || parse.events !== events)
    throw new Error('replay and parse disagree on the events')
  console.log(
    `  full verified replay ${replay.seconds!.toFixed(2)} s wall, ${replay.cpu!.toFixed(2)} s CPU (peak RSS growth ${mib(replay.rssGrowth!)}); chunked read + JSON.parse ${parse.seconds!.toFixed(2)} s wall, ${parse.cpu!.toFixed(2)} s CPU (${mib(parse.rssGrowth!)}) -> ${(replay.cpu! / parse.cpu!).toFixed(2)}x CPU (${(replay.seconds! / parse.seconds!).toFixed(2)}x wall)`,
  )
  return replay.cpu! / parse.cpu!
}

async function main(quick: boolean): Promise<void> {
  const sizes = quick ? [10_000, 100_000] : [10_000, 100_000, 1_000_000]
  const resumes: Record<number, Result> = {}
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
      const cold = bestOf(5, 'resume', h, 'big')
      const warm = bestOf(3, 'resume-warm', h, 'big')
      const read = bestOf(5, 'read-checkpoint', h, 'big')
      resumes[size] = cold
      if (cold.residentFrom !== events)
        throw new Error(`the resume of ${events} events did not use the checkpoint`)
      const checkpoint = statSync(join(h, 'sessions', 'big', 'session.checkpoint')).size
      console.log(
        `${events} events (${mib(statSync(file).size)} log, checkpoint ${mib(checkpoint)}, surface ${mib(cold.surfaceBytes!)}; first open + close ${prepared.toFixed(1)} s):`,
      )
      console.log(
        `  resume to ready-to-send ${ms(cold.seconds!)} wall, ${ms(cold.cpu!)} CPU (in a process that resumed once before: ${ms(warm.cpu!)} CPU), peak RSS growth ${mib(cold.rssGrowth!)}`,
      )
      console.log(
        `  reading checkpoint + tail (${read.tail} lines) + JSON.parse ${ms(read.seconds!)} wall, ${ms(read.cpu!)} CPU -> ${(cold.cpu! / read.cpu!).toFixed(2)}x CPU (${(cold.seconds! / read.seconds!).toFixed(2)}x wall; warm ${(warm.cpu! / read.cpu!).toFixed(2)}x)`,
      )
      if (size === sizes[sizes.length - 1]) {
        const replayRatio = replayLine(h, events)
        goals.push(
          {
            name: `resume ${events} events to ready-to-send (wall)`,
            value: cold.seconds!,
            limit: 0.5,
            unit: 's',
          },
          { name: 'resume / reading checkpoint + tail', value: cold.cpu! / read.cpu!, limit: 1.5 },
          {
            name: 'resume peak RSS growth / surface size',
            value: cold.rssGrowth! / cold.surfaceBytes!,
            limit: 2,
          },
          {
            name: 'full verified replay / chunked read + JSON.parse',
            value: replayRatio,
            limit: 1.2,
          },
        )
      }
      rmSync(h, { recursive: true, force: true })
    }
    const largest = sizes[sizes.length - 1]!
    goals.push({
      name: `resume ${largest / 1000}k / resume 10k (flat)`,
      value: resumes[largest]!.cpu! / resumes[10_000]!.cpu!,
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
