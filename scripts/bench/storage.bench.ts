// Session storage: JSONL durable append and 1M-event load vs raw baselines, and PostgreSQL
// batched append / 100k-event load. Each load runs in its own process so peak RSS is its own.
//   pnpm bench storage
import { spawnSync } from 'node:child_process'
import {
  closeSync,
  promises as fs,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { SESSION_FORMAT_VERSION, type Session } from '@keel/session'
import { MemoryStore } from '@keel/store'
import { JsonlStore } from '@keel/store-jsonl'
import { appendSampleTurn, SAMPLE_TURN_EVENTS } from '@keel/store-testkit'
import { postgresBench } from './storage-postgres.js'

const self = fileURLToPath(import.meta.url)
const [phase, ...args] = process.argv.slice(2)
const secs = (ns: bigint) => Number(ns) / 1e9
const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`
const peakRss = () => process.resourceUsage().maxRSS * 1024

/** The JSON lines of `turns` sample turns, built through a real session (so they are valid). */
async function sampleLines(turns: number, pad: string): Promise<string[]> {
  const store = new MemoryStore()
  const handle = await store.create({ id: 'sample' })
  for (let i = 0; i < turns; i++) appendSampleTurn(handle.session, pad)
  await handle.close()
  return handle.session.events.map((e) => JSON.stringify(e))
}

type Recorded = { type: string; data: unknown; options: unknown }

/** The 11 appends of sample turn `turn`, recorded (not yet appended). */
function turnAppends(turn: number, pad: string): Recorded[] {
  const calls: Recorded[] = []
  const recorder = {
    lastTurn: turn - 1,
    append: (type: string, data: unknown, options: unknown) => calls.push({ type, data, options }),
  }
  appendSampleTurn(recorder as unknown as Session, pad)
  return calls
}

/**
 * JSONL durable append at one batch size, end to end: `session.append` of `batch` events
 * (validation, serialization) then `flush()` (write + fsync), against the baseline
 * `JSON.stringify` of the same events + `appendFile` + `fsync`. The two alternate batch by
 * batch (and which goes first), so both see the same disk conditions.
 */
async function jsonlAppendAtBatch(
  batch: number,
  batches: number,
): Promise<{ keel: number; flush: number; raw: number }> {
  const home = mkdtempSync(join(tmpdir(), 'keel-bench-'))
  try {
    const warmup = Math.max(3, Math.ceil(batches / 10))
    const pad = 'x'.repeat(300)
    const store = new JsonlStore({ home })
    const handle = await store.create({ id: 'append' })
    const session = handle.session
    const rawFile = await fs.open(join(home, 'raw.jsonl'), 'a')
    const queue: Recorded[] = []
    let turns = 0
    let keel = 0n
    let flush = 0n
    let raw = 0n
    for (let i = 0; i < warmup + batches; i++) {
      while (queue.length < batch) queue.push(...turnAppends(++turns, pad))
      const todo = queue.splice(0, batch)
      const keelBatch = async () => {
        const t0 = process.hrtime.bigint()
        for (const c of todo) session.append(c.type as never, c.data as never, c.options as never)
        const f0 = process.hrtime.bigint()
        await handle.flush()
        const t1 = process.hrtime.bigint()
        return [t1 - t0, t1 - f0] as const
      }
      const rawBatch = async () => {
        // the same events, as the session committed them (the last `batch` of the log)
        const events = session.events
        const from = Math.max(0, events.length - batch)
        const r0 = process.hrtime.bigint()
        let text = ''
        for (let j = from; j < events.length; j++) text += `${JSON.stringify(events[j])}\n`
        await rawFile.appendFile(text)
        await rawFile.sync()
        return process.hrtime.bigint() - r0
      }
      let k: readonly [bigint, bigint]
      let r: bigint
      if (i % 2 === 0 || i < 1) {
        k = await keelBatch()
        r = await rawBatch()
      } else {
        r = await rawBatch() // the previous batch's lines again (same size), then Keel's new batch
        k = await keelBatch()
      }
      if (i >= warmup) {
        keel += k[0]
        flush += k[1]
        raw += r
      }
    }
    await handle.close()
    await rawFile.close()
    return { keel: secs(keel), flush: secs(flush), raw: secs(raw) }
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
}

/** JSONL durable append end to end at batch sizes 1, 11, 100 and 1000, as ratios to the raw baseline. */
async function appendBench(): Promise<Record<string, number>> {
  const ratios: Record<string, number> = {}
  for (const [batch, batches] of [
    [1, 400],
    [11, 240],
    [100, 60],
    [1000, 16],
  ] as const) {
    const { keel, flush, raw } = await jsonlAppendAtBatch(batch, batches)
    const ratio = keel / raw
    ratios[`jsonl append, batch ${batch}`] = ratio
    ratios[`jsonl flush() only, batch ${batch}`] = flush / raw
    console.log(
      `jsonl durable append, batches of ${batch} (${batches} fsynced batches): keel end to end (session.append validation + flush) ${keel.toFixed(3)} s, of which flush() (the store's write path: serialize check, write, fsync) ${flush.toFixed(3)} s; raw JSON.stringify+appendFile+fsync ${raw.toFixed(3)} s -> ratio ${ratio.toFixed(2)}x end to end (goal <= 1.25x), ${(flush / raw).toFixed(2)}x flush only`,
    )
  }
  return ratios
}

/** Writes a valid 1M-event session file directly (templated sample turns with renumbered seqs). */
async function writeBigSession(home: string, id: string, events: number): Promise<string> {
  const template = (await sampleLines(1, 'y'.repeat(120))).map(
    (l) => JSON.parse(l) as Record<string, unknown>,
  )
  const dir = join(home, 'sessions', id)
  await fs.mkdir(dir, { recursive: true })
  const file = join(dir, 'session.jsonl')
  const fd = openSync(file, 'w')
  const header = { version: SESSION_FORMAT_VERSION, id, createdAt: Date.now() }
  writeSync(
    fd,
    `${JSON.stringify({ format: 'keel-session', formatVersion: SESSION_FORMAT_VERSION, header })}\n`,
  )
  let seq = 0
  let chunk = ''
  for (let turn = 1; seq < events; turn++) {
    for (const t of template) {
      if (seq === events) break
      const data = JSON.parse(JSON.stringify(t.data)) as Record<string, unknown>
      if ('turn' in data) data.turn = turn
      const message = data.message as { toolCallId?: string; content?: { id?: string }[] } | undefined
      if (message?.toolCallId) message.toolCallId = `call-${turn}`
      for (const block of message?.content ?? []) if (block.id) block.id = `call-${turn}`
      if (typeof data.callId === 'string') data.callId = `call-${turn}`
      chunk += `${JSON.stringify({ ...t, seq, data })}\n`
      seq++
    }
    if (chunk.length > 1 << 22) {
      writeSync(fd, chunk)
      chunk = ''
    }
  }
  writeSync(fd, chunk)
  closeSync(fd)
  return file
}

function runPhase(name: string, ...rest: string[]): Record<string, number> {
  const result = spawnSync(
    process.execPath,
    ['--max-old-space-size=8192', '--import', 'tsx', '--expose-gc', self, name, ...rest],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  )
  if (result.status !== 0) throw new Error(`phase ${name} failed (${result.status ?? result.signal})`)
  return JSON.parse(result.stdout.trim().split('\n').pop()!) as Record<string, number>
}

async function loadBench(): Promise<Record<string, number>> {
  const home = mkdtempSync(join(tmpdir(), 'keel-bench-'))
  try {
    const events = 1_000_000 - (1_000_000 % SAMPLE_TURN_EVENTS)
    const file = await writeBigSession(home, 'big', events)
    const size = statSync(file).size
    const raw = runPhase('raw-load', file)
    const keel = runPhase('keel-load', home, 'big')
    if (keel.events !== events || raw.events !== events + 1)
      throw new Error(`event counts differ: ${JSON.stringify({ raw, keel })}`)
    const ratio = keel.seconds! / raw.seconds!
    console.log(
      `jsonl load of ${events} events (${mib(size)}): keel ${keel.seconds!.toFixed(2)} s, peak RSS ${mib(keel.rss!)}; raw read+split+JSON.parse ${raw.seconds!.toFixed(2)} s, peak RSS ${mib(raw.rss!)} -> ratio ${ratio.toFixed(2)}x (goal <= 1.5x)`,
    )
    return { 'jsonl load': ratio }
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
}

/** All measured ratios in one block at the end of the run. */
function printRatios(ratios: Record<string, number>): void {
  if (Object.keys(ratios).length === 0) return
  console.log('\nratios (keel / raw baseline):')
  for (const [name, ratio] of Object.entries(ratios)) console.log(`  ${name.padEnd(28)} ${ratio.toFixed(2)}x`)
}

if (phase === 'raw-load') {
  const t0 = process.hrtime.bigint()
  const text = readFileSync(args[0]!, 'utf8')
  const parsed = text
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as unknown)
  const seconds = secs(process.hrtime.bigint() - t0)
  console.log(JSON.stringify({ seconds, rss: peakRss(), events: parsed.length }))
} else if (phase === 'keel-load') {
  const t0 = process.hrtime.bigint()
  const session = await new JsonlStore({ home: args[0]! }).load(args[1]!)
  const seconds = secs(process.hrtime.bigint() - t0)
  console.log(JSON.stringify({ seconds, rss: peakRss(), events: session.nextSeq }))
} else {
  // `storage.bench.ts [append|load|postgres]` runs one part; no argument runs all
  const ratios: Record<string, number> = {}
  if (!phase || phase === 'append') Object.assign(ratios, await appendBench())
  if (!phase || phase === 'load') Object.assign(ratios, await loadBench())
  if (!phase || phase === 'postgres') await postgresBench()
  printRatios(ratios)
}
