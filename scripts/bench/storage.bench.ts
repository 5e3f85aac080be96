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
import { SESSION_FORMAT_VERSION } from '@keel/session'
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

async function appendBench(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), 'keel-bench-'))
  try {
    const warmup = 80
    const batches = 480
    const pad = 'x'.repeat(300)
    const store = new JsonlStore({ home })
    const handle = await store.create({ id: 'append' })
    const rawFile = await fs.open(join(home, 'raw.jsonl'), 'a')
    // Keel and the baseline alternate batch by batch, so both see the same disk conditions.
    let keel = 0n
    let keelFlush = 0n
    let raw = 0n
    for (let i = 0; i < warmup + batches; i++) {
      // Keel: one sample turn (11 events) appended to the session, then flush().
      // Baseline: the same 11 events serialized to lines, appendFile + fsync.
      // The two alternate which goes first, so neither always pays for the other's disk work.
      const keelTurn = async () => {
        const t0 = process.hrtime.bigint()
        appendSampleTurn(handle.session, pad)
        const f0 = process.hrtime.bigint()
        await handle.flush()
        const t1 = process.hrtime.bigint()
        return [t1 - t0, t1 - f0] as const
      }
      const rawTurn = async (from: number) => {
        const events = handle.session.events
        const r0 = process.hrtime.bigint()
        let text = ''
        for (let j = from; j < from + SAMPLE_TURN_EVENTS; j++) text += `${JSON.stringify(events[j])}\n`
        await rawFile.appendFile(text)
        await rawFile.sync()
        return process.hrtime.bigint() - r0
      }
      let k: readonly [bigint, bigint]
      let r: bigint
      if (i % 2 === 0) {
        k = await keelTurn()
        r = await rawTurn(handle.session.events.length - SAMPLE_TURN_EVENTS)
      } else {
        // the baseline writes the lines of the previous turn again (same size), then Keel its new turn
        r = await rawTurn(handle.session.events.length - SAMPLE_TURN_EVENTS)
        k = await keelTurn()
      }
      if (i >= warmup) {
        keel += k[0]
        keelFlush += k[1]
        raw += r
      }
    }
    await handle.close()
    await rawFile.close()
    if ((await fs.stat(store.fileOf('append'))).size < (await fs.stat(join(home, 'raw.jsonl'))).size) {
      throw new Error('keel wrote less than the baseline')
    }
    const events = batches * SAMPLE_TURN_EVENTS
    console.log(
      `jsonl durable append: ${events} events in ${batches} fsynced batches of ${SAMPLE_TURN_EVENTS} (alternating with the baseline), raw JSON.stringify+appendFile+fsync of the same lines ${secs(raw).toFixed(3)} s`,
    )
    console.log(
      `  keel end to end (session.append validation + serialization + write + fsync) ${secs(keel).toFixed(3)} s = ${Math.round(events / secs(keel))} events/s -> ratio ${(secs(keel) / secs(raw)).toFixed(2)}x`,
    )
    console.log(
      `  keel flush() only (the store's write path: batch, write, fsync) ${secs(keelFlush).toFixed(3)} s -> ratio ${(secs(keelFlush) / secs(raw)).toFixed(2)}x (goal <= 1.25x)`,
    )
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
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

async function loadBench(): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), 'keel-bench-'))
  try {
    const events = 1_000_000 - (1_000_000 % SAMPLE_TURN_EVENTS)
    const file = await writeBigSession(home, 'big', events)
    const size = statSync(file).size
    const raw = runPhase('raw-load', file)
    const keel = runPhase('keel-load', home, 'big')
    if (keel.events !== events || raw.events !== events + 1)
      throw new Error(`event counts differ: ${JSON.stringify({ raw, keel })}`)
    console.log(
      `jsonl load of ${events} events (${mib(size)}): keel ${keel.seconds!.toFixed(2)} s, peak RSS ${mib(keel.rss!)}; raw read+split+JSON.parse ${raw.seconds!.toFixed(2)} s, peak RSS ${mib(raw.rss!)} -> ratio ${(keel.seconds! / raw.seconds!).toFixed(2)}x (goal <= 2x)`,
    )
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
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
  if (!phase || phase === 'append') await appendBench()
  if (!phase || phase === 'load') await loadBench()
  if (!phase || phase === 'postgres') await postgresBench()
}
