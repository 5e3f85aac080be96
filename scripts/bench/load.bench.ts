// Throughput under load: SESSIONS concurrent sessions, TURNS turns each (every turn two model
// calls: one noop tool call, then the answer), against a local scripted server in its own
// process. Keel (a real agent per session over the memory, JSONL or PostgreSQL store) against
// the raw `openai` client replaying the very request bodies Keel sent and persisting the
// same event bytes at the same flush points (load-raw.ts), in the same run, alternating which
// side goes first. Prints turns per second as a ratio to raw, and p50/p99 turn latency, against
// the goals: ≥ 0.8× raw with the memory store, ≥ 0.7× on JSONL and PostgreSQL, p99 ≤ 1.5×.
//
// `pnpm bench load` runs it all; `-- --only=memory` (or jsonl, postgres) one store,
// `--side=keel` only Keel's side (for `node --cpu-prof`), `--rounds=N`.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { createAgent } from '@keel/agent'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { MemoryStore, type SessionStore } from '@keel/store'
import { JsonlStore } from '@keel/store-jsonl'
import { PostgresStore } from '@keel/store-postgres'
import { defineTool } from '@keel/tools'
import OpenAI from 'openai'
import { z } from 'zod'
import {
  flushBatches,
  jsonlSink,
  memorySink,
  postgresSink,
  type RawSink,
  rawSession,
  type TurnTemplate,
} from './load-raw.js'
import { startServerProcess } from './server-process.js'

const SESSIONS = 200
const TURNS = 3
const CALLS_PER_TURN = 2
const POOL = 10 // PostgreSQL connections, both sides
const GOALS = { memory: 0.8, jsonl: 0.7, postgres: 0.7 } as const
const P99_GOAL = 1.5

const args = new Map(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=')
    return [k!, v ?? 'true']
  }),
)
type Kind = keyof typeof GOALS
const pgUrl = process.env.KEEL_PG_URL
const kinds = (['memory', 'jsonl', 'postgres'] as const).filter(
  (k) => (args.get('only') ?? k) === k && (k !== 'postgres' || pgUrl !== undefined),
)
const sides =
  args.get('side') === 'keel'
    ? (['keel'] as const)
    : args.get('side') === 'raw'
      ? (['raw'] as const)
      : (['keel', 'raw'] as const)
const ROUNDS = Number(args.get('rounds') ?? 5) // five: a 3-round median swung ±0.05 between runs of one build

const noop = defineTool({
  name: 'noop',
  description: 'Does nothing and says so.',
  inputSchema: z.strictObject({ n: z.number().int() }),
  annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
  isConcurrencySafe: true,
  call: async (input) => `noop ${input.n}`,
})

const server = await startServerProcess('load-server.ts')
const { baseURL, ask } = server
const llm = createDeepSeekAdapter({ baseURL, env: {} })
// The client's default retries: the scripted server closes idle keep-alive sockets after 5 s,
// and a request on such a socket is retried (the agent's own retry does the same for Keel).
const raw = new OpenAI({ baseURL, apiKey: 'bench-no-key', maxRetries: 2 })

const home = mkdtempSync(join(tmpdir(), 'keel-bench-load-'))
let runNo = 0

function keelStore(kind: Kind): SessionStore {
  if (kind === 'memory') return new MemoryStore()
  if (kind === 'jsonl') return new JsonlStore({ home: join(home, `keel-${++runNo}`) })
  return new PostgresStore({
    url: pgUrl!,
    schema: `keel_bench_load_${process.pid}_${++runNo}`,
    poolSize: POOL,
  })
}

/** One Keel session: a real agent over a store handle, TURNS turns; each turn's latency. */
async function keelSession(store: SessionStore, i: number): Promise<number[]> {
  const handle = await store.create({ id: `s${i}` })
  const agent = await createAgent({ llm, session: handle, tools: [noop], cwd: process.cwd(), maxSteps: 4 })
  const latencies: number[] = []
  for (let t = 1; t <= TURNS; t++) {
    const t0 = performance.now()
    const result = await agent.send(`Turn ${t}: run the noop tool once, then answer.`)
    latencies.push(performance.now() - t0)
    if (result.reason !== 'completed') throw new Error(`turn ended ${result.reason}`)
  }
  await agent.close()
  return latencies
}

interface Run {
  turnsPerSecond: number
  latencies: number[]
  /** CPU time of this process (user + system) per turn, ms: less sensitive to machine load than wall time. */
  cpuPerTurn: number
}

/** CPU ms (user + system) of this process since `since`. */
function cpuMs(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since)
  return (d.user + d.system) / 1000
}

async function keelRun(kind: Kind): Promise<Run> {
  const store = keelStore(kind)
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const all = await Promise.all(Array.from({ length: SESSIONS }, (_, i) => keelSession(store, i)))
  const ms = performance.now() - t0
  const cpu = cpuMs(cpu0)
  await store.close()
  if (store instanceof PostgresStore) await dropSchema(`keel_bench_load_${process.pid}_${runNo}`)
  return {
    turnsPerSecond: (SESSIONS * TURNS * 1000) / ms,
    latencies: all.flat(),
    cpuPerTurn: cpu / (SESSIONS * TURNS),
  }
}

async function dropSchema(schema: string): Promise<void> {
  const { default: pg } = await import('pg')
  const client = new pg.Client({ connectionString: pgUrl })
  await client.connect()
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
  await client.end()
}

/** The template of the raw side: one Keel session's request bodies and stored events, per turn. */
async function template(): Promise<{ header: unknown; turns: TurnTemplate[] }> {
  const store = new MemoryStore()
  await ask({ forget: true })
  const handle = await store.create({ id: 'template' })
  const agent = await createAgent({ llm, session: handle, tools: [noop], cwd: process.cwd(), maxSteps: 4 })
  for (let t = 1; t <= TURNS; t++) await agent.send(`Turn ${t}: run the noop tool once, then answer.`)
  await agent.close()
  const { bodies } = (await ask({ last: TURNS * CALLS_PER_TURN })) as { bodies: unknown[] }
  const events = JSON.parse(JSON.stringify(handle.session.events)) as Array<{ type: string }>
  const turns: TurnTemplate[] = []
  let start = 0
  for (let t = 0; t < TURNS; t++) {
    const end = events.findIndex((e, i) => i >= start && e.type === 'turn/end') + 1
    turns.push({
      bodies: bodies.slice(t * CALLS_PER_TURN, (t + 1) * CALLS_PER_TURN),
      batches: flushBatches(events.slice(start, end)),
    })
    start = end
  }
  return { header: handle.session.header, turns }
}

async function rawRun(kind: Kind, tpl: { header: unknown; turns: TurnTemplate[] }): Promise<Run> {
  const sink: RawSink =
    kind === 'memory'
      ? memorySink()
      : kind === 'jsonl'
        ? jsonlSink(join(home, `raw-${++runNo}`))
        : await postgresSink(pgUrl!, `keel_bench_raw_${process.pid}_${++runNo}`, POOL)
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const all = await Promise.all(
    Array.from({ length: SESSIONS }, (_, i) => rawSession(raw, sink, `s${i}`, tpl.header, tpl.turns)),
  )
  const ms = performance.now() - t0
  const cpu = cpuMs(cpu0)
  await sink.close()
  return {
    turnsPerSecond: (SESSIONS * TURNS * 1000) / ms,
    latencies: all.flat(),
    cpuPerTurn: cpu / (SESSIONS * TURNS),
  }
}

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(s.length * q))]!
}
const median = (xs: number[]) => quantile(xs, 0.5)

const tpl = await template()
const results = new Map<Kind, { keel: Run[]; raw: Run[] }>()
for (const kind of kinds) {
  const series = { keel: [] as Run[], raw: [] as Run[] }
  // one warm-up of each side, then ROUNDS rounds alternating which side goes first
  for (const side of sides) await (side === 'keel' ? keelRun(kind) : rawRun(kind, tpl))
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? sides : [...sides].reverse()
    for (const side of order) {
      // No forced `gc()` between rounds: a forced full collection discards compiled code
      // (968 optimizations in two rounds with it, 594 without), so each round would measure
      // a process re-warming rather than a server in its steady state.
      await ask({ forget: true })
      const run = await (side === 'keel' ? keelRun(kind) : rawRun(kind, tpl))
      series[side].push(run)
      process.stderr.write(
        `  ${kind} ${side} round ${round + 1}: ${run.turnsPerSecond.toFixed(0)} turns/s, ${run.cpuPerTurn.toFixed(2)} ms CPU/turn\n`,
      )
    }
  }
  results.set(kind, series)
}
server.close()
rmSync(home, { recursive: true, force: true })

console.log(
  `${SESSIONS} concurrent sessions × ${TURNS} turns (${CALLS_PER_TURN} model calls each) against a local scripted server, ${ROUNDS} rounds (medians of turns/s; latency quantiles over all turns of all rounds)`,
)
for (const [kind, { keel, raw: rawRuns }] of results) {
  const label =
    kind === 'memory'
      ? 'memory store'
      : kind === 'jsonl'
        ? 'JSONL store (fsync per flush)'
        : 'PostgreSQL store'
  console.log(label)
  const line = (name: string, runs: Run[]) => {
    const lat = runs.flatMap((x) => x.latencies)
    console.log(
      `  ${name}  ${median(runs.map((x) => x.turnsPerSecond)).toFixed(0)} turns/s  p50 ${quantile(lat, 0.5).toFixed(1)} ms  p99 ${quantile(lat, 0.99).toFixed(1)} ms  CPU ${median(runs.map((x) => x.cpuPerTurn)).toFixed(2)} ms/turn`,
    )
  }
  if (rawRuns.length > 0) line('raw openai client', rawRuns)
  if (keel.length > 0) line('keel agent       ', keel)
  if (keel.length === 0 || rawRuns.length === 0) continue
  const ratio = median(keel.map((x) => x.turnsPerSecond)) / median(rawRuns.map((x) => x.turnsPerSecond))
  const kl = keel.flatMap((x) => x.latencies)
  const rl = rawRuns.flatMap((x) => x.latencies)
  const p50 = quantile(kl, 0.5) / quantile(rl, 0.5)
  const p99 = quantile(kl, 0.99) / quantile(rl, 0.99)
  const cpu = median(keel.map((x) => x.cpuPerTurn)) / median(rawRuns.map((x) => x.cpuPerTurn))
  const goal = GOALS[kind]
  console.log(
    `  throughput         ${ratio.toFixed(2)}× raw (goal ≥ ${goal}×: ${ratio >= goal ? 'met' : 'MISSED'})`,
  )
  console.log(
    `  latency            p50 ${p50.toFixed(2)}×, p99 ${p99.toFixed(2)}× raw (goal p99 ≤ ${P99_GOAL}×: ${p99 <= P99_GOAL ? 'met' : 'MISSED'})`,
  )
  console.log(
    `  client CPU/turn    ${cpu.toFixed(2)}× raw (what the loop adds, less sensitive to machine load)`,
  )
}
