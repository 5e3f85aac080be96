// Per-step overhead of the agent loop against the raw `openai` client.
//
// Both stream the same scripted responses from the same local scripted server. Each round
// runs one agent turn of STEPS steps (every step but the last asks for one no-op tool), then
// replays, with the raw openai client, exactly the request bodies the agent sent in that
// turn (same history, same tool specs), consuming the same responses. The difference per
// step is what the agent adds: adapter mapping, event validation and commits, the store
// flush, tool dispatch, observers. Goal: ≤ 10 % or ≤ 2 ms per step, whichever is larger.
import { fork } from 'node:child_process'
import { dirname, join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { createAgent } from '@keel/agent'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { MemoryStore } from '@keel/persistence'
import { defineTool } from '@keel/tools'
import OpenAI from 'openai'
import { z } from 'zod'

const STEPS = 10
const WARMUP_ROUNDS = 5
const ROUNDS = 25
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
const child = fork(join(dirname(fileURLToPath(import.meta.url)), 'agent-server.ts'), [String(STEPS)], {
  execArgv: ['--import', 'tsx'],
})
type Reply = { baseURL?: string; bodies?: unknown[] }
const replies: Array<(reply: Reply) => void> = []
child.on('message', (reply: Reply) => replies.shift()?.(reply))
const ask = (message?: object): Promise<Reply> =>
  new Promise((resolve) => {
    replies.push(resolve)
    if (message) child.send(message)
  })
const { baseURL } = (await ask()) as { baseURL: string }
let seen = 0
const raw = new OpenAI({ baseURL, apiKey: 'bench-no-key', maxRetries: 0 })
// One adapter (one openai client, one connection pool) for every agent turn, as the raw
// client is one for every replay: connection setup is not what is measured.
const llm = createDeepSeekAdapter({ baseURL, env: {} })

async function agentTurn(): Promise<{ ms: number; bodies: unknown[] }> {
  const store = new MemoryStore()
  const handle = await store.create()
  const agent = await createAgent({
    llm,
    session: handle,
    tools: [noop],
    cwd: process.cwd(),
    maxSteps: STEPS + 1,
    observers: [{ onTextDelta: () => {}, onReasoningDelta: () => {}, onEvent: () => {} }],
  })
  const start = performance.now()
  const result = await agent.send('Run the noop tool until you are done.')
  const ms = performance.now() - start
  if (result.reason !== 'completed' || handle.session.lastTurn !== 1)
    throw new Error(`turn ended ${result.reason}`)
  await agent.close()
  await store.close()
  const { bodies } = (await ask({ since: seen })) as { bodies: unknown[] }
  seen += bodies.length + STEPS // the raw replay of this round adds as many again
  if (bodies.length !== STEPS) throw new Error(`expected ${STEPS} model calls, saw ${bodies.length}`)
  return { ms, bodies }
}

async function rawReplay(bodies: unknown[]): Promise<number> {
  const start = performance.now()
  for (const body of bodies) {
    const stream = await raw.chat.completions.create({
      ...(body as unknown as OpenAI.ChatCompletionCreateParamsStreaming),
      stream: true,
    })
    for await (const _chunk of stream) {
      // consume, as the adapter does
    }
  }
  return performance.now() - start
}

const agentMs: number[] = []
const rawMs: number[] = []
for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
  const { ms, bodies } = await agentTurn()
  const replay = await rawReplay(bodies)
  if (round >= WARMUP_ROUNDS) {
    agentMs.push(ms / STEPS)
    rawMs.push(replay / STEPS)
  }
  globalThis.gc?.()
}
child.send({ close: true })

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]!
}
const a = median(agentMs)
const r = median(rawMs)
const overhead = a - r
const budget = Math.max(0.1 * r, 2)
const chunks = Math.ceil(TEXT_CHARS / 8) + 6
console.log(
  `agent loop vs raw openai client, ${STEPS} steps per turn, ~${chunks} SSE chunks per response, ${ROUNDS} rounds (medians)`,
)
console.log(`  raw openai client   ${r.toFixed(3)} ms/step`)
console.log(`  agent loop          ${a.toFixed(3)} ms/step`)
console.log(
  `  overhead            ${overhead.toFixed(3)} ms/step  ratio ${(a / r).toFixed(3)}×  (budget ${budget.toFixed(3)} ms/step: ${
    overhead <= budget ? 'within goal' : 'OVER GOAL'
  })`,
)
