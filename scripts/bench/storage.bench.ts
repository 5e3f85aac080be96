// `pnpm bench storage [append|postgres]`: the write path of the JSONL store, and the
// PostgreSQL store's append and load. (Loading and resuming long JSONL sessions:
// `pnpm bench resume`.)
//   turn appends   agent-like turns (flushes before each model call and at the turn end) on
//                  the JSONL store — records, checkpoints and all. Baseline: JSON.stringify of
//                  the same events, appendFile and fdatasync (Keel's durability) at the same
//                  flush points, alternating turn by turn.
//   batch sizes    session.append of a batch then flush(), against the same baseline per batch.
import { promises as fs, mkdtempSync, rmSync, writeSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import '@keel/presets'
import type { Session } from '@keel/session'
import type { SessionHandle } from '@keel/store'
import { JsonlStore } from '@keel/store-jsonl'
import { appendSampleTurn } from '@keel/store-testkit'
import { type Goal, printGoals } from './goals.js'
import { postgresBench } from './storage-postgres.js'

const secs = (ns: bigint) => Number(ns) / 1e9

type Recorded = { type: string; data: unknown; options: unknown }

/** The 11 appends of sample turn `turn`, recorded (not yet appended), and where the agent would flush. */
function turnAppends(turn: number, pad: string): { calls: Recorded[]; flushAfter: ReadonlySet<number> } {
  const calls: Recorded[] = []
  const recorder = {
    lastTurn: turn - 1,
    append: (type: string, data: unknown, options: unknown) => calls.push({ type, data, options }),
  }
  appendSampleTurn(recorder as unknown as Session, pad)
  // the agent flushes before each model call (after step/start) and at the turn end
  const flushAfter = new Set(
    calls.flatMap((c, i) => (c.type === 'step/start' || c.type === 'turn/end' ? [i] : [])),
  )
  return { calls, flushAfter }
}

/** One turn through the store: the appends, flushing where the agent does. */
async function keelTurn(handle: SessionHandle, turn: ReturnType<typeof turnAppends>): Promise<bigint> {
  const t0 = process.hrtime.bigint()
  for (const [i, c] of turn.calls.entries()) {
    handle.session.append(c.type as never, c.data as never, c.options as never)
    if (turn.flushAfter.has(i)) await handle.flush()
  }
  return process.hrtime.bigint() - t0
}

/**
 * The same turn's events (as the session committed them) appended raw at the same flush
 * points: `appendFile` + `fdatasync`, or (`sync`) a synchronous write + `fdatasync` as Keel writes.
 */
async function rawTurn(
  file: fs.FileHandle,
  events: readonly unknown[],
  turn: ReturnType<typeof turnAppends>,
  sync = false,
) {
  const t0 = process.hrtime.bigint()
  let text = ''
  for (const [i, event] of events.entries()) {
    text += `${JSON.stringify(event)}\n`
    if (turn.flushAfter.has(i)) {
      if (sync) writeSync(file.fd, text)
      else await file.appendFile(text)
      await file.datasync()
      text = ''
    }
  }
  return process.hrtime.bigint() - t0
}

/** Agent-like turns on the JSONL store against the raw baseline; checkpoints every 2,000 events as by default. */
async function turnBench(turns: number): Promise<Goal> {
  const home = mkdtempSync(join(tmpdir(), 'keel-bench-turns-'))
  try {
    const store = new JsonlStore({ home })
    const handle = await store.create({ id: 'turns' })
    const raw = await fs.open(join(home, 'raw.jsonl'), 'a')
    const pad = 'x'.repeat(300)
    let keel = 0n
    let base = 0n
    let syncBase = 0n
    const warmup = 20
    for (let t = 1; t <= warmup + turns; t++) {
      const turn = turnAppends(t, pad)
      const from = handle.session.nextSeq
      let k: bigint
      let r: bigint
      if (t % 2 === 0 || t === 1) {
        k = await keelTurn(handle, turn)
        r = await rawTurn(raw, handle.session.events.slice(from), turn)
      } else {
        // the previous turn's events again (same size) first, then this turn through Keel
        r = await rawTurn(raw, handle.session.events.slice(from - turn.calls.length, from), turn)
        k = await keelTurn(handle, turn)
      }
      const s = await rawTurn(raw, handle.session.events.slice(from), turn, true)
      if (t > warmup) {
        keel += k
        base += r
        syncBase += s
      }
    }
    await handle.close()
    await raw.close()
    const ratio = Number(keel) / Number(base)
    console.log(
      `jsonl turn appends, ${turns} turns of 11 events, 3 flushes each: keel ${secs(keel).toFixed(2)} s (validation, serialization, write + fdatasync, integrity records, checkpoints as by default), raw appendFile + fdatasync ${secs(base).toFixed(2)} s -> ${ratio.toFixed(2)}x; raw synchronous write + fdatasync (as Keel writes) ${secs(syncBase).toFixed(2)} s -> ${(Number(keel) / Number(syncBase)).toFixed(2)}x`,
    )
    return { name: 'jsonl turn appends / raw appendFile + fdatasync', value: ratio, limit: 1.25 }
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
}

/** session.append of `batch` events then flush(), against the raw baseline for the same lines, alternating. */
async function batchBench(batch: number, batches: number): Promise<void> {
  const home = mkdtempSync(join(tmpdir(), 'keel-bench-batch-'))
  try {
    const handle = await new JsonlStore({ home }).create({ id: 'append' })
    const raw = await fs.open(join(home, 'raw.jsonl'), 'a')
    const queue: Recorded[] = []
    let turns = 0
    let keel = 0n
    let flush = 0n
    let base = 0n
    const warmup = Math.max(3, Math.ceil(batches / 10))
    for (let i = 0; i < warmup + batches; i++) {
      while (queue.length < batch) queue.push(...turnAppends(++turns, 'x'.repeat(300)).calls)
      const todo = queue.splice(0, batch)
      const t0 = process.hrtime.bigint()
      for (const c of todo) handle.session.append(c.type as never, c.data as never, c.options as never)
      const f0 = process.hrtime.bigint()
      await handle.flush()
      const t1 = process.hrtime.bigint()
      const events = handle.session.events.slice(-batch)
      const r0 = process.hrtime.bigint()
      await raw.appendFile(events.map((e) => `${JSON.stringify(e)}\n`).join(''))
      await raw.datasync()
      const r1 = process.hrtime.bigint()
      if (i >= warmup) {
        keel += t1 - t0
        flush += t1 - f0
        base += r1 - r0
      }
    }
    await handle.close()
    await raw.close()
    console.log(
      `  batches of ${String(batch).padStart(4)}: end to end ${(Number(keel) / Number(base)).toFixed(2)}x, flush() alone ${(Number(flush) / Number(base)).toFixed(2)}x (raw ${secs(base).toFixed(3)} s for ${batches} batches)`,
    )
  } finally {
    rmSync(home, { recursive: true, force: true })
  }
}

const part = process.argv.slice(2).find((a) => !a.startsWith('--'))
const goals: Goal[] = []
if (!part || part === 'append') {
  goals.push(await turnBench(400))
  console.log(
    'jsonl durable append by batch size (session.append + flush() vs JSON.stringify + appendFile + fdatasync):',
  )
  for (const [batch, batches] of [
    [1, 300],
    [11, 200],
    [100, 50],
    [1000, 12],
  ] as const) {
    await batchBench(batch, batches)
  }
}
if (!part || part === 'postgres') goals.push(...(await postgresBench()))
printGoals(goals)
