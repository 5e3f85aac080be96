// The store's share of load.bench.ts without the model calls: SESSIONS concurrent sessions
// of TURNS agent-like turns each (the events of load.bench.ts's turn, flushed at the same
// four points), through a handle of the PostgreSQL store, against the raw `pg` sink of
// load-raw.ts persisting the same lines at the same points, alternating, in one process.
// Prints the median client CPU per turn (user + system) of each side and their difference;
// `memory` runs the memory store alone (what the handle costs without a server).
//
//   KEEL_PG_URL=… node --import tsx scripts/bench/load-store.ts [postgres|memory] [rounds]
//
// Not a `*.bench.ts` (`pnpm bench` does not run it): a tool for profiling the store path
// (`node --cpu-prof`), whose figures docs/guides/storage.md quotes.

import type { Session, ToolCallId } from '@keel/session'
import { MemoryStore, type SessionStore } from '@keel/store'
import { PostgresStore } from '@keel/store-postgres'
import { sampleStream } from '@keel/store-testkit'
import pg from 'pg'
import { postgresSink } from './load-raw.js'

const SESSIONS = 200
const TURNS = 3
const POOL = 10
const url = process.env.KEEL_PG_URL
const kind = process.argv[2] ?? 'postgres'
const rounds = Number(process.argv[3] ?? 10)
if (kind !== 'memory' && url === undefined) throw new Error('set KEEL_PG_URL')

const answer = 'The quick brown fox jumps over the lazy dog while the agent loop keeps its log. '.repeat(3)
const usage = { inputTokens: 1200, outputTokens: 40, totalTokens: 1240, cacheHitTokens: 1024 }

/** One turn of load.bench.ts's shape: `flush` where the agent flushes (before each model call, after the tool call, at the end). */
async function turn(session: Session, flush: () => Promise<void>): Promise<void> {
  const turn = session.lastTurn + 1
  const callId = `call_${turn}` as ToolCallId
  session.append('turn/start', { turn })
  session.append('user/message', {
    message: {
      role: 'user',
      content: [{ type: 'text', text: `Turn ${turn}: run the noop tool once, then answer.` }],
    },
  })
  session.append('step/start', { turn, step: 1 })
  await flush()
  const content = [
    { type: 'reasoning' as const, text: 'Thinking about the next step briefly.' },
    { type: 'text' as const, text: 'Running the tool.' },
    { type: 'tool-call' as const, id: callId, name: 'noop', arguments: '{"n":3}' },
  ]
  session.append('assistant/message', {
    turn,
    step: 1,
    message: { role: 'assistant', content },
    stream: sampleStream(turn * 1000),
    usage,
  })
  session.append('tool/call', { turn, step: 1, callId, name: 'noop', arguments: '{"n":3}' })
  await flush()
  session.append('tool/result', {
    turn,
    step: 1,
    message: {
      role: 'tool',
      toolCallId: callId,
      toolName: 'noop',
      content: [{ type: 'text', text: 'noop 3' }],
    },
  })
  session.append('step/end', { turn, step: 1 })
  session.append('step/start', { turn, step: 2 })
  await flush()
  session.append('assistant/message', {
    turn,
    step: 2,
    message: { role: 'assistant', content: [{ type: 'text', text: answer }] },
    stream: sampleStream(turn * 1000 + 100),
    usage,
  })
  session.append('step/end', { turn, step: 2 })
  session.append('turn/end', { turn, reason: 'completed' })
  await flush()
}

const cpuPerTurn = (since: NodeJS.CpuUsage) => {
  const d = process.cpuUsage(since)
  return (d.user + d.system) / 1000 / (SESSIONS * TURNS)
}
let runNo = 0

async function keelRun(): Promise<number> {
  const schema = `keel_bench_store_${process.pid}_${++runNo}`
  const store: SessionStore =
    kind === 'memory' ? new MemoryStore() : new PostgresStore({ url: url!, schema, poolSize: POOL })
  const cpu0 = process.cpuUsage()
  await Promise.all(
    Array.from({ length: SESSIONS }, async (_, i) => {
      const handle = await store.create({ id: `s${i}` })
      for (let t = 0; t < TURNS; t++) await turn(handle.session, () => handle.flush())
      await handle.close()
    }),
  )
  const cpu = cpuPerTurn(cpu0)
  await store.close()
  if (kind !== 'memory') {
    const client = new pg.Client({ connectionString: url })
    await client.connect()
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await client.end()
  }
  return cpu
}

/** The raw side's template: the same events, as a memory-store session stored them, cut at the same flushes. */
async function template(): Promise<{ header: string; batches: unknown[][] }> {
  const store = new MemoryStore()
  const handle = await store.create({ id: 'template' })
  const cuts: number[] = []
  for (let t = 0; t < TURNS; t++) {
    await turn(handle.session, async () => {
      cuts.push(handle.session.nextSeq)
    })
  }
  const events = JSON.parse(JSON.stringify(handle.session.events)) as unknown[]
  const batches = cuts.map((end, i) => events.slice(cuts[i - 1] ?? 0, end))
  const header = JSON.stringify(handle.session.header)
  await handle.close()
  return { header, batches }
}

async function rawRun(tpl: { header: string; batches: unknown[][] }): Promise<number> {
  const sink = await postgresSink(url!, `keel_bench_store_raw_${process.pid}_${++runNo}`, POOL)
  const cpu0 = process.cpuUsage()
  await Promise.all(
    Array.from({ length: SESSIONS }, async (_, i) => {
      const log = await sink.create(`s${i}`, tpl.header)
      for (const batch of tpl.batches) await log.append(batch.map((event) => JSON.stringify(event)))
      await log.close()
    }),
  )
  const cpu = cpuPerTurn(cpu0)
  await sink.close()
  return cpu
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!
const tpl = await template()
const keel: number[] = []
const raw: number[] = []
await keelRun() // warm-up of each side
if (kind !== 'memory') await rawRun(tpl)
for (let round = 0; round < rounds; round++) {
  const order = round % 2 === 0 ? ['keel', 'raw'] : ['raw', 'keel']
  for (const side of order) {
    if (side === 'keel') keel.push(await keelRun())
    else if (kind !== 'memory') raw.push(await rawRun(tpl))
  }
}
const k = median(keel)
if (kind === 'memory') {
  console.log(`memory store: ${k.toFixed(3)} ms CPU/turn (median of ${rounds})`)
} else {
  const r = median(raw)
  console.log(
    `PostgreSQL store ${k.toFixed(3)} ms CPU/turn, raw pg sink ${r.toFixed(3)}, difference ${(k - r).toFixed(3)} (medians of ${rounds})`,
  )
}
