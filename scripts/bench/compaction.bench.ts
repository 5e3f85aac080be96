// Compaction: (1) prune + derive on a 100k-event session, as a ratio to a plain derive of
// the same session (goal ≤ 2×); (2) a 1,000-turn scripted agent session stays under its
// context window with its todo list intact (exits non-zero when it does not), and the share
// of the summary requests' prompt tokens the provider's prefix cache served (the scripted
// server simulates DeepSeek's 64-token-block prefix cache), beside the same share for the
// agent's own step requests of the same session as the baseline.
//
// (1) "plain derive" folds the session's 100k stored events into the messages the model sees
// (`Session.create` from freshly parsed events, then `deriveMessages()`), as a load of lines
// this store wrote does it: envelope, lifecycle and surface rules, no payload validation or
// copies (validating every payload again is not deriving). "prune + derive" is one automatic
// compaction that prunes (measure, plan, append the prune events and their replaces,
// `compaction/end`) followed by `deriveMessages()` on the live session.
import { performance } from 'node:perf_hooks'
import { createAgent, usePlugin } from '@keel/agent'
import { Compactor, compactionPlugin, measureSurface } from '@keel/compaction'
import { createDeepSeekAdapter } from '@keel/deepseek'
import type { ToolCallId } from '@keel/llm'
import { type ScriptedResponse, startScriptedServer } from '@keel/scripted-server'
import { Session } from '@keel/session'
import { todoPlugin, todoProjection } from '@keel/todo'
import { defineTool } from '@keel/tools'
import { z } from 'zod'
import { filler, type Op, stream } from './session-ops.js'

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {})

/** Per turn: a user message, 3 steps, 2 read_file calls per tool step with ~1 KB results (20 events). */
function turnOps(turn: number): Op[] {
  const ops: Op[] = [
    ['turn/start', { turn }],
    ['user/message', { message: { role: 'user', content: [{ type: 'text', text: filler(160, turn) }] } }],
  ]
  for (let step = 1; step <= 3; step++) {
    ops.push(['step/start', { turn, step }])
    const ids = step < 3 ? [0, 1].map((i) => `call_${turn}_${step}_${i}` as ToolCallId) : []
    const calls = ids.map((id) => ({
      type: 'tool-call' as const,
      id,
      name: 'read_file',
      arguments: `{"path":"src/f${turn}.ts"}`,
    }))
    ops.push([
      'assistant/message',
      {
        turn,
        step,
        message: { role: 'assistant', content: [{ type: 'text', text: filler(200, step) }, ...calls] },
        stream,
      },
    ])
    for (const c of calls)
      ops.push(['tool/call', { turn, step, callId: c.id, name: c.name, arguments: c.arguments }])
    for (const c of calls) {
      ops.push([
        'tool/result',
        {
          turn,
          step,
          message: {
            role: 'tool',
            toolCallId: c.id,
            toolName: 'read_file',
            content: [{ type: 'text', text: filler(1_000, turn) }],
          },
        },
      ])
    }
    ops.push(['step/end', { turn, step }])
  }
  ops.push(['turn/end', { turn, reason: 'completed' }])
  return ops
}

function sessionOf(events: number): Session {
  const s = Session.create('bench', {}, undefined, { clock: () => 1_700_000_000_000 })
  for (let turn = 1; s.events.length < events; turn++)
    for (const [type, data] of turnOps(turn)) s.append(type, data as never)
  return s
}

const time = (fn: () => void): number => {
  const start = performance.now()
  fn()
  return performance.now() - start
}

// An adapter that is never called: the window is set so that pruning alone reaches the target.
const idle = await startScriptedServer()
const llm = createDeepSeekAdapter({ baseURL: idle.baseURL, model: 'bench', env: {} })
const config = { contextWindow: 5_000_000, threshold: 0.8, target: 0.5, keepRecent: 0.05 }

const ROUNDS = 7
console.log(`prune + derive on a 100k-event session (best of ${ROUNDS}):`)
let plainMs = Number.POSITIVE_INFINITY
let pruneMs = Number.POSITIVE_INFINITY
let pruned = 0
let before = 0
let after = 0
const storedText = JSON.stringify(sessionOf(100_000).events)
const stored = JSON.parse(storedText) as unknown[]
for (let round = 0; round < ROUNDS; round++) {
  const parsed = JSON.parse(storedText) as unknown[] // frozen in place by the load: a fresh copy per round
  gc()
  plainMs = Math.min(
    plainMs,
    time(() => {
      const s = Session.create('plain', {}, parsed, { parsedSeed: true, trusted: () => true })
      if (s.deriveMessages().length === 0) throw new Error('empty surface')
    }),
  )
  gc()
  const live = Session.create('live', {}, stored)
  const compactor = new Compactor({ session: live, llm, config })
  let ms = 0
  gc()
  const result = await (async () => {
    const start = performance.now()
    const r = await compactor.compact({ trigger: 'auto' })
    const messages = live.deriveMessages()
    ms = performance.now() - start
    if (messages.length === 0) throw new Error('empty surface')
    return r
  })()
  if (result.status !== 'compacted' || result.summarized)
    throw new Error(`unexpected result ${JSON.stringify(result)}`)
  pruneMs = Math.min(pruneMs, ms)
  pruned = result.pruned
  before = result.tokensBefore
  after = result.tokensAfter
}
await idle.close()
console.log(
  `  session: ${stored.length} events; pruned ${pruned} outputs, ${before.toLocaleString('en-US')} → ${after.toLocaleString('en-US')} estimated tokens`,
)
console.log(
  `  plain derive (fold the stored log into messages, as a load of this store's own lines): ${plainMs.toFixed(1)} ms`,
)
console.log(`  prune + derive (one automatic compaction, then deriveMessages): ${pruneMs.toFixed(1)} ms`)
console.log(`  ratio prune+derive / plain derive: ${(pruneMs / plainMs).toFixed(2)}×   (goal ≤ 2×)`)

// (2) 1,000 turns through the real agent, compaction and todo plugins, over real HTTP.
const TURNS = 1_000
const WINDOW = 8_000
const readFile = defineTool({
  name: 'read_file',
  description: 'Reads a file.',
  inputSchema: z.strictObject({ path: z.string() }),
  annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
  call: async ({ path }) => filler(3_000, path),
})
let turnNo = 0
let stepInTurn = 0
let maxRequestTokens = 0
let summaryCalls = 0
const server = await startScriptedServer({
  promptCache: true,
  handler(request): ScriptedResponse {
    const messages = (request.body?.messages ?? []) as Array<{ content?: unknown }>
    const last = messages.at(-1)
    if (typeof last?.content === 'string' && last.content.startsWith('Context compaction:')) {
      summaryCalls++
      return { text: `## Goal\nWork through the tasks.\n## Progress\nUp to task ${turnNo}.` }
    }
    maxRequestTokens = Math.max(maxRequestTokens, Math.ceil(JSON.stringify(messages).length / 4))
    stepInTurn++
    if (stepInTurn === 1 && turnNo % 50 === 1) {
      return {
        toolCalls: [
          {
            name: 'todo_write',
            arguments: {
              todos: [
                {
                  id: `batch-${turnNo}`,
                  content: `Finish batch starting at task ${turnNo}`,
                  status: 'in_progress',
                },
                { id: 'report', content: 'Write the final report', status: 'pending' },
              ],
            },
          },
        ],
      }
    }
    if (stepInTurn <= 2) {
      return {
        text: filler(400, `plan ${turnNo}`),
        toolCalls: [{ name: 'read_file', arguments: { path: `src/f${turnNo}.ts` } }],
      }
    }
    return { text: `Task ${turnNo} done.` }
  },
})
const agentLlm = createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted', env: {} })
const session = Session.create('long')
const agent = await createAgent({
  llm: agentLlm,
  session,
  cwd: process.cwd(),
  systemPrompt: 'Work through the tasks.',
  maxTokens: 1_000,
  plugins: [
    usePlugin(compactionPlugin({ llm: agentLlm }), { contextWindow: WINDOW }),
    usePlugin(todoPlugin, { reminderAfterSteps: 0 }),
  ],
  tools: [readFile],
})
const started = performance.now()
let worst = 0
let failures = 0
for (turnNo = 1; turnNo <= TURNS; turnNo++) {
  stepInTurn = 0
  const result = await agent.send(`Task ${turnNo}.`)
  if (result.reason !== 'completed') failures++
  worst = Math.max(worst, measureSurface(session).tokens)
}
const elapsed = performance.now() - started
await agent.close()
await server.close()
const todos = session.project(todoProjection)
const lastBatch = Math.floor((TURNS - 1) / 50) * 50 + 1
const todoIntact = todos.length === 2 && todos[0]!.id === `batch-${lastBatch}` && todos[1]!.id === 'report'
const count = (type: string) => session.events.filter((e) => e.type === type).length
console.log(`\n${TURNS}-turn scripted agent session, ${WINDOW.toLocaleString('en-US')}-token window:`)
console.log(
  `  ${session.events.length} events, ${count('compaction/start')} compactions (${count('compaction/prune')} prunes, ${summaryCalls} summaries, ${session.events.filter((e) => e.type === 'compaction/end' && e.data.error).length} failed), ${(elapsed / 1000).toFixed(1)} s`,
)
console.log(
  `  largest request ≈ ${maxRequestTokens.toLocaleString('en-US')} tokens (${((100 * maxRequestTokens) / WINDOW).toFixed(0)}% of the window); largest surface after a turn ${worst.toLocaleString('en-US')} tokens`,
)
console.log(
  `  turns not completed: ${failures}; todo list intact: ${todoIntact ? 'yes' : `NO (${JSON.stringify(todos)})`}`,
)
// Prompt-cache shares: the summary requests' (from their compaction/summary usage) and the
// agent's step requests' (from the assistant messages' usage), over the same session.
const share = (usages: Array<{ inputTokens: number; cacheHitTokens?: number } | undefined>) => {
  let prompt = 0
  let hit = 0
  for (const u of usages) {
    if (!u) continue
    prompt += u.inputTokens
    hit += u.cacheHitTokens ?? 0
  }
  return { prompt, hit, share: prompt === 0 ? 0 : hit / prompt }
}
const summaryCache = share(
  session.events.map((e) => (e.type === 'compaction/summary' ? e.data.usage : undefined)),
)
const stepCache = share(
  session.events.map((e) => (e.type === 'assistant/message' ? e.data.usage : undefined)),
)
console.log(
  `  summary requests' prompt served by the prefix cache: ${(100 * summaryCache.share).toFixed(1)}% (${summaryCache.hit.toLocaleString('en-US')} of ${summaryCache.prompt.toLocaleString('en-US')} tokens)`,
)
console.log(
  `  baseline, the agent's step requests in the same run: ${(100 * stepCache.share).toFixed(1)}%; ratio summary / steps ${(summaryCache.share / Math.max(stepCache.share, 1e-9)).toFixed(2)}×`,
)
if (maxRequestTokens >= WINDOW || worst >= WINDOW || failures > 0 || !todoIntact) {
  console.error('FAILED: the long session left the window or lost its todo list')
  process.exit(1)
}
