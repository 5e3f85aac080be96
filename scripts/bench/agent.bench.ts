// Per-step overhead of the agent loop against the raw `openai` client.
//
// Both stream the same scripted responses from the same local scripted server. Each round
// runs one agent turn of STEPS steps (every step but the last asks for one no-op tool), then
// replays, with the raw openai client, exactly the request bodies the agent sent in that
// turn (same history, same tool specs), consuming the same responses. The difference per
// step is what the agent adds: adapter mapping, event validation and commits, the store
// flush, tool dispatch, observers. Goal: ≤ 10 % or ≤ 2 ms per step, whichever is larger.
// Measured twice: with the memory store, and with the JSONL store (a real file; every flush
// — before each model call, once a step's tool calls are logged, and at the turn end — is an
// fdatasync). On JSONL the raw replay persists too: it appends the same lines to a file with
// fdatasync at the same flush points in the same order, so the disk's cost is on both sides
// and the difference is Keel's.
import { promises as fs, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { createAgent } from '@keel/agent'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { MemoryStore, type SessionStore } from '@keel/store'
import { JsonlStore } from '@keel/store-jsonl'
import { defineTool } from '@keel/tools'
import OpenAI from 'openai'
import { z } from 'zod'
import { startServerProcess } from './server-process.js'

const STEPS = 10
const WARMUP_ROUNDS = 6
const ROUNDS = 40
const TEXT_CHARS = 240 // the server's text per response (see agent-server.ts)

const noop = defineTool({
  name: 'noop',
  description: 'Does nothing and says so.',
  inputSchema: z.strictObject({ n: z.number().int() }),
  annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
  isConcurrencySafe: true,
  call: async (input) => `noop ${input.n}`,
})

// The server runs in its own process (agent-server.ts), so its event loop does not share
// time with the client being measured.
const server = await startServerProcess('agent-server.ts', [String(STEPS)])
const { baseURL, ask } = server
const raw = new OpenAI({ baseURL, apiKey: 'bench-no-key', maxRetries: 0 })
// One adapter (one openai client, one connection pool) for every agent turn, as the raw
// client is one for every replay: connection setup is not what is measured.
const llm = createDeepSeekAdapter({ baseURL, env: {} })

type StoreKind = 'memory' | 'jsonl'
const jsonlHome = mkdtempSync(join(tmpdir(), 'keel-bench-agent-'))

/**
 * What the agent persisted in a turn: its lines between flushes, in flush order, each marked
 * whether the flush was the one before a model call (the others follow a step's tool calls
 * or end the turn).
 */
type Persisted = Array<{ text: string; beforeCall: boolean }>

/** Events the agent appends right before a model call: the flush after them precedes it. */
const BEFORE_CALL = new Set(['step/start', 'request/context', 'request/header'])

async function agentTurn(
  kind: StoreKind,
): Promise<{ ms: number; cpu: number; bodies: unknown[]; persisted: Persisted }> {
  const store: SessionStore = kind === 'memory' ? new MemoryStore() : new JsonlStore({ home: jsonlHome })
  const handle = await store.create()
  const flushedAt: number[] = []
  const recording = {
    get session() {
      return handle.session
    },
    directory: handle.directory,
    flush: () => {
      flushedAt.push(handle.session.nextSeq)
      return handle.flush()
    },
    close: () => handle.close(),
  }
  const agent = await createAgent({
    llm,
    session: recording,
    tools: [noop],
    cwd: process.cwd(),
    maxSteps: STEPS + 1,
    observers: [{ onTextDelta: () => {}, onReasoningDelta: () => {}, onEvent: () => {} }],
  })
  const cpu0 = process.cpuUsage()
  const start = performance.now()
  const result = await agent.send('Run the noop tool until you are done.')
  const ms = performance.now() - start
  const cpu = cpuMs(cpu0)
  if (result.reason !== 'completed' || handle.session.lastTurn !== 1)
    throw new Error(`turn ended ${result.reason}`)
  await agent.close()
  await store.close()
  const { bodies } = (await ask({ last: STEPS })) as { bodies: unknown[] }
  if (bodies.length !== STEPS) throw new Error(`expected ${STEPS} model calls, saw ${bodies.length}`)
  const events = handle.session.events
  const lines = events.map((e) => `${JSON.stringify(e)}\n`)
  const persisted: Persisted = []
  let from = 0
  for (const to of flushedAt) {
    const beforeCall = to > 0 && BEFORE_CALL.has(events[to - 1]!.type)
    persisted.push({ text: to > from ? lines.slice(from, to).join('') : '', beforeCall })
    from = to
  }
  if (persisted.filter((p) => p.beforeCall).length !== STEPS)
    throw new Error(`expected a flush before each of the ${STEPS} model calls`)
  return { ms, cpu, bodies, persisted }
}

/** CPU time (user + system) this process spent since `since`, in ms. */
function cpuMs(since: NodeJS.CpuUsage): number {
  const d = process.cpuUsage(since)
  return (d.user + d.system) / 1000
}

/**
 * The agent's requests through the raw client; with `persisted` (JSONL), the agent's lines
 * appended to a file with fdatasync at the same flush points, in the same order (before each
 * call, after a step's tool calls, at the end).
 */
async function rawReplay(bodies: unknown[], persisted?: Persisted): Promise<{ ms: number; cpu: number }> {
  const file = persisted
    ? await fs.open(join(jsonlHome, `raw-${process.hrtime.bigint()}.jsonl`), 'a')
    : undefined
  const persist = async (text: string) => {
    if (!file || text === '') return
    await file.appendFile(text)
    await file.datasync()
  }
  const call = async (body: unknown) => {
    const stream = await raw.chat.completions.create({
      ...(body as unknown as OpenAI.ChatCompletionCreateParamsStreaming),
      stream: true,
    })
    for await (const _chunk of stream) {
      // consume, as the adapter does
    }
  }
  const cpu0 = process.cpuUsage()
  const start = performance.now()
  let next = 0
  if (persisted) {
    for (const flush of persisted) {
      await persist(flush.text)
      if (flush.beforeCall) await call(bodies[next++])
    }
  }
  for (; next < bodies.length; next++) await call(bodies[next])
  const result = { ms: performance.now() - start, cpu: cpuMs(cpu0) }
  await file?.close()
  return result
}

interface Series {
  agentMs: number[]
  rawMs: number[]
  overheadMs: number[]
  agentCpu: number[]
  rawCpu: number[]
}
const series: Record<StoreKind, Series> = {
  memory: { agentMs: [], rawMs: [], overheadMs: [], agentCpu: [], rawCpu: [] },
  jsonl: { agentMs: [], rawMs: [], overheadMs: [], agentCpu: [], rawCpu: [] },
}
let bodies: unknown[] = []
const persistedOf: Partial<Record<StoreKind, Persisted>> = {}
for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
  for (const kind of ['memory', 'jsonl'] as const) {
    // Alternate which side goes first so neither always runs on a warmer process. The agent's
    // request bodies are the same every round (the script is deterministic).
    let agent: { ms: number; cpu: number }
    let replay: { ms: number; cpu: number }
    const persisting = kind === 'jsonl'
    if (round % 2 === 0 || persistedOf[kind] === undefined) {
      const turn = await agentTurn(kind)
      bodies = turn.bodies
      persistedOf[kind] = turn.persisted
      agent = turn
      replay = await rawReplay(bodies, persisting ? turn.persisted : undefined)
    } else {
      replay = await rawReplay(bodies, persisting ? persistedOf[kind] : undefined)
      agent = await agentTurn(kind)
    }
    if (round >= WARMUP_ROUNDS) {
      const s = series[kind]
      s.agentMs.push(agent.ms / STEPS)
      s.rawMs.push(replay.ms / STEPS)
      s.overheadMs.push((agent.ms - replay.ms) / STEPS)
      s.agentCpu.push(agent.cpu / STEPS)
      s.rawCpu.push(replay.cpu / STEPS)
    }
    // No forced `gc()` between rounds: it discards compiled code (see load.bench.ts), so
    // every round would measure a process re-warming.
  }
}
server.close()

const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(s.length * q))]!
}
const median = (xs: number[]) => quantile(xs, 0.5)
const chunks = Math.ceil(TEXT_CHARS / 8) + 6
console.log(
  `agent loop vs raw openai client, ${STEPS} steps per turn, ~${chunks} SSE chunks per response, ${ROUNDS} rounds (medians; overhead = median of paired differences)`,
)
for (const kind of ['memory', 'jsonl'] as const) {
  const { agentMs, rawMs, overheadMs, agentCpu, rawCpu } = series[kind]
  const a = median(agentMs)
  const r = median(rawMs)
  const overhead = median(overheadMs) // median of the paired per-round differences
  const budget = Math.max(0.1 * r, 2)
  console.log(
    kind === 'memory'
      ? 'memory store (raw: the requests only)'
      : 'JSONL store, fdatasync on every flush (raw: the requests and the same lines appended with fdatasync at the same flush points)',
  )
  console.log(`  raw openai client   ${r.toFixed(3)} ms/step`)
  console.log(`  agent loop          ${a.toFixed(3)} ms/step`)
  console.log(
    `  overhead            ${overhead.toFixed(3)} ms/step  (p25 ${quantile(overheadMs, 0.25).toFixed(3)}, p75 ${quantile(overheadMs, 0.75).toFixed(3)})`,
  )
  console.log(
    `  ratio               ${(1 + overhead / r).toFixed(3)}×  budget max(10 %, 2 ms) = ${budget.toFixed(3)} ms/step: ${
      overhead <= budget ? 'within goal' : 'OVER GOAL'
    }`,
  )
  console.log(
    `  client CPU time     raw ${median(rawCpu).toFixed(3)} ms/step, agent ${median(agentCpu).toFixed(3)} ms/step: +${(
      median(agentCpu) - median(rawCpu)
    ).toFixed(3)} ms/step (less sensitive to machine load than wall time)`,
  )
}
rmSync(jsonlHome, { recursive: true, force: true })
