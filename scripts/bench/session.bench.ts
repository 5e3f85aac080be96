// Session append throughput and the cost of append + deriveMessages() as the log grows.
// Baseline: JSON.stringify of the same events, measured in the same run.
import type { ToolCallId } from '@keel/session'
import { Session } from '@keel/session'
import { filler, type Op, stream } from './session-ops.js'

/** A realistic mix: per turn a user message, 3 steps, 2 tool calls per tool step with ~1 KB results. */
function turnOps(turn: number): Op[] {
  const ops: Op[] = [
    ['turn/start', { turn }],
    ['user/message', { message: { role: 'user', content: [{ type: 'text', text: filler(160, turn) }] } }],
  ]
  for (let step = 1; step <= 3; step++) {
    ops.push(['step/start', { turn, step }])
    const ids = step < 3 ? [0, 1].map((i) => `call_${turn}_${step}_${i}` as ToolCallId) : []
    ops.push([
      'assistant/message',
      {
        turn,
        step,
        message: {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: filler(120, step) },
            { type: 'text', text: filler(200, step) },
            ...ids.map((id) => ({
              type: 'tool-call' as const,
              id,
              name: 'read_file',
              arguments: '{"path":"src/index.ts"}',
            })),
          ],
        },
        stream,
        usage: {
          inputTokens: 1200,
          outputTokens: 80,
          totalTokens: 1280,
          cacheHitTokens: 1024,
          cacheMissTokens: 176,
        },
      },
    ])
    for (const id of ids)
      ops.push([
        'tool/call',
        { turn, step, callId: id, name: 'read_file', arguments: '{"path":"src/index.ts"}' },
      ])
    for (const id of ids)
      ops.push([
        'tool/result',
        {
          turn,
          step,
          message: {
            role: 'tool',
            toolCallId: id,
            toolName: 'read_file',
            content: [{ type: 'text', text: filler(1000, turn) }],
          },
        },
      ])
    ops.push(['step/end', { turn, step }])
  }
  ops.push(['turn/end', { turn, reason: 'completed' }])
  return ops
}

function opsFor(count: number, firstTurn = 1): Op[] {
  const ops: Op[] = []
  for (let turn = firstTurn; ops.length < count; turn++) ops.push(...turnOps(turn))
  return ops
}

function time(fn: () => void): number {
  const start = process.hrtime.bigint()
  fn()
  return Number(process.hrtime.bigint() - start) / 1e6
}

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {})

// 1. append throughput vs JSON.stringify
const N = 50_000
const ops = opsFor(N)
const rounds = 5
let appendMs = Number.POSITIVE_INFINITY
let stringifyMs = Number.POSITIVE_INFINITY
for (let r = 0; r < rounds; r++) {
  gc()
  const s = Session.create('bench', {}, undefined, { clock: () => 1_700_000_000_000 })
  appendMs = Math.min(
    appendMs,
    time(() => {
      for (const [type, data] of ops) s.append(type, data as never)
    }),
  )
  gc()
  let bytes = 0
  stringifyMs = Math.min(
    stringifyMs,
    time(() => {
      for (let i = 0; i < ops.length; i++) {
        const [type, data] = ops[i]!
        bytes += JSON.stringify({ type, seq: i, time: 1_700_000_000_000, data }).length
      }
    }),
  )
  if (bytes === 0) throw new Error('unreachable')
}
const perAppendUs = (appendMs * 1000) / ops.length
const perStringifyUs = (stringifyMs * 1000) / ops.length
console.log(`append throughput (${ops.length} events, realistic mix, best of ${rounds}):`)
console.log(
  `  Session.append:        ${(ops.length / (appendMs / 1000)).toFixed(0).padStart(9)} events/s  (${perAppendUs.toFixed(2)} µs/event)`,
)
console.log(
  `  JSON.stringify (base): ${(ops.length / (stringifyMs / 1000)).toFixed(0).padStart(9)} events/s  (${perStringifyUs.toFixed(2)} µs/event)`,
)
console.log(`  ratio append / stringify: ${(appendMs / stringifyMs).toFixed(2)}×   (goal ≤ 3×)`)

// 2. append + deriveMessages() at growing sizes: cost per operation must stay flat
console.log('\nappend + deriveMessages() per operation, measured over 2,000 appends at each size:')
const sizes = [1_000, 10_000, 100_000]
{
  // warm-up so the first size is not measured with a cold JIT
  const warm = Session.create('warm', {}, undefined, { clock: () => 1 })
  for (const [type, data] of opsFor(20_000)) {
    warm.append(type, data as never)
    warm.deriveMessages()
  }
}
const perOp: number[] = []
for (const size of sizes) {
  gc()
  const s = Session.create('grow', {}, undefined, { clock: () => 1 })
  for (const [type, data] of opsFor(size)) s.append(type, data as never)
  const more = opsFor(2_000, s.lastTurn + 1)
  let best = Number.POSITIVE_INFINITY
  // measure in 4 slices of 500 and keep the best slice (noise-resistant)
  for (let slice = 0; slice < 4; slice++) {
    const part = more.slice(slice * 500, slice * 500 + 500)
    const ms = time(() => {
      for (const [type, data] of part) {
        s.append(type, data as never)
        if (s.deriveMessages().length === 0) throw new Error('empty surface')
      }
    })
    best = Math.min(best, (ms * 1000) / part.length)
  }
  perOp.push(best)
  console.log(
    `  at ${String(s.events.length - 2_000).padStart(7)} events: ${best.toFixed(2)} µs per append+derive`,
  )
}
console.log(`  ratio 100k / 1k: ${(perOp[2]! / perOp[0]!).toFixed(2)}×   (goal ≤ 1.5×)`)

// 3. replay: loading a stored log (what a store does on open) vs JSON.parse of its lines
{
  const source = Session.create('src', {}, undefined, { clock: () => 1_700_000_000_000 })
  for (const [type, data] of ops) source.append(type, data as never)
  const lines = source.events.map((e) => JSON.stringify(e))
  let replayMs = Number.POSITIVE_INFINITY
  let parseMs = Number.POSITIVE_INFINITY
  for (let r = 0; r < rounds; r++) {
    gc()
    let parsed: unknown[] = []
    parseMs = Math.min(
      parseMs,
      time(() => {
        parsed = lines.map((line) => JSON.parse(line))
      }),
    )
    gc()
    replayMs = Math.min(
      replayMs,
      time(() => {
        Session.create('replay', {}, parsed, { parsedSeed: true })
      }),
    )
  }
  console.log(`\nreplay (${lines.length} parsed events, parsedSeed, best of ${rounds}):`)
  console.log(
    `  Session.create(seed):  ${(lines.length / (replayMs / 1000)).toFixed(0).padStart(9)} events/s  (${((replayMs * 1000) / lines.length).toFixed(2)} µs/event)`,
  )
  console.log(
    `  JSON.parse (base):     ${(lines.length / (parseMs / 1000)).toFixed(0).padStart(9)} events/s  (${((parseMs * 1000) / lines.length).toFixed(2)} µs/event)`,
  )
  console.log(`  ratio replay / parse: ${(replayMs / parseMs).toFixed(2)}×`)
}
