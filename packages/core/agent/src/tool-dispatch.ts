import { canonicalJson, errorMessage } from '@keel/base'
import type { ToolCallBlock } from '@keel/llm'
import {
  errorOutput,
  executeTool,
  formatZodIssues,
  isConcurrencySafe,
  type ParsedToolInput,
  parseToolInput,
  type Tool,
  type ToolContext,
  toolFacts,
} from '@keel/tools'
import type { Reinput } from './interceptors-run.js'
import { askAbout } from './permission.js'
import type { ToolCallInfo } from './plugin.js'
import type { Runtime, TurnState } from './runtime.js'
import { abortedCall, capOutcome, commitResult, notRun, type ToolOutcome } from './tool-results.js'

/** A call looked up and parsed, ready for {@link runOne}. */
export interface PreparedCall {
  call: ToolCallBlock
  tool: Tool<unknown> | undefined
  parsed: ParsedToolInput<unknown> | undefined
  safe: boolean
  /** Decided before dispatch (a call cut off by the output limit, a filtered answer): not run. */
  settled?: ToolOutcome
}

/**
 * Logs every call, then runs them: consecutive concurrency-safe calls together (at most
 * `maxParallelTools` at once), every other call alone, in model order. Results are
 * committed in model order as soon as each one and all before it are done. Calls with a
 * `settled` outcome (decided before dispatch) are not run; that outcome is committed in their place.
 */
export async function runTools(
  rt: Runtime,
  ts: TurnState,
  step: number,
  calls: readonly ToolCallBlock[],
  settled: ReadonlyMap<string, ToolOutcome> = new Map(),
): Promise<void> {
  const { turn } = ts
  for (const call of calls) {
    rt.session.append('tool/call', {
      turn,
      step,
      callId: call.id,
      name: call.name,
      arguments: call.arguments,
    })
  }
  // Durable before anything runs: a crash during a long tool leaves its call in the log,
  // answered `TOOL_INTERRUPTED` on the next open rather than forgotten.
  await rt.flush()
  const prepared = calls.map((call) => prepare(rt, call, settled.get(call.id)))
  const batches: number[][] = []
  for (let i = 0; i < prepared.length; i++) {
    const lastBatch = batches[batches.length - 1]
    if (prepared[i]!.safe && lastBatch && prepared[lastBatch[0]!]!.safe) lastBatch.push(i)
    else batches.push([i])
  }
  const slots = prepared.map(() => deferred<ToolOutcome>())
  const run = async (i: number): Promise<void> => {
    const outcome = await runOne(rt, ts, step, prepared[i]!)
    slots[i]!.resolve(await capOutcome(rt, prepared[i]!.call, prepared[i]!.tool, outcome))
  }
  const executor = (async () => {
    for (const batch of batches) {
      if (batch.length === 1) await run(batch[0]!)
      else await runBounded(batch, rt.options.maxParallel, run)
    }
  })()
  for (let i = 0; i < prepared.length; i++) {
    commitResult(rt, turn, step, prepared[i]!.call, await slots[i]!.promise)
  }
  await executor
}

/** Looks the call's tool up and parses its arguments (`settled`: decided before dispatch, not run). */
export function prepare(rt: Runtime, call: ToolCallBlock, settled: ToolOutcome | undefined): PreparedCall {
  if (settled) return { call, tool: undefined, parsed: undefined, safe: false, settled }
  const tool = rt.registry.get(call.name)
  if (!tool) return { call, tool, parsed: undefined, safe: false }
  const parsed = parseToolInput(tool, call.arguments)
  return { call, tool, parsed, safe: parsed.ok && isConcurrencySafe(tool, parsed.input) }
}

/**
 * Runs one prepared call the way every call runs: the `beforeTool` vote (input rewrites
 * included), the answerer chain for an `ask`, the tool through `executeTool`, then `afterTool`.
 * Never throws; every outcome is a {@link ToolOutcome}.
 */
export async function runOne(
  rt: Runtime,
  ts: TurnState,
  step: number,
  prepared: PreparedCall,
): Promise<ToolOutcome> {
  const { call, tool, parsed } = prepared
  const { turn, signal } = ts
  if (prepared.settled) return prepared.settled
  try {
    if (!tool || !parsed) {
      return {
        output: errorOutput(
          'TOOL_NOT_FOUND',
          `there is no tool named ${JSON.stringify(call.name)}; available tools: ${rt.registry.names().join(', ') || '(none)'}.`,
        ),
        ran: false,
      }
    }
    if (!parsed.ok) return { output: parsed.output, ran: false }
    if (signal.aborted) return abortedCall(call)
    const first: ToolCallInfo = {
      turn,
      step,
      call,
      tool,
      input: parsed.input,
      facts: toolFacts(tool, parsed.input, rt.options.cwd),
      signal,
    }
    const before = await rt.host.beforeTool(first, (current, input, plugin) =>
      reinput(rt, current, input, plugin),
    )
    const info = before.info
    const decision =
      before.decision.action === 'ask'
        ? await askAbout(
            { session: rt.session, answerers: rt.answerers, asked: ts.asked },
            before.decision,
            before.plugin,
            info,
            signal,
          )
        : before.decision
    if (decision.action === 'deny') {
      const by = before.plugin ? ` by plugin '${before.plugin}'` : ''
      return {
        ...notRun(call, decision.errorCode ?? 'TOOL_DENIED', `denied${by}: ${decision.reason}`),
        refusedBy: before.plugin ?? '@keel/agent',
      }
    }
    if (signal.aborted) return abortedCall(call)
    rt.emit('onToolCallStarted', { turn, step, call })
    const context: ToolContext = {
      signal,
      cwd: rt.options.cwd,
      callId: call.id,
      session: rt.session,
      progress: (progress) => rt.emit('onToolProgress', { turn, step, call, progress }),
      services: rt.services,
    }
    const maxResultChars = rt.options.maxResultChars
    const outcome = await executeTool(tool, info.input, context, {
      outputDir: rt.options.toolOutputDir,
      ...(maxResultChars === undefined ? {} : { maxResultChars }),
    })
    const after = await rt.host.afterTool({ ...info, output: outcome.output })
    if (after.decision.action === 'block') {
      return {
        output: errorOutput(
          'TOOL_RESULT_BLOCKED',
          `${call.name} ran, but plugin '${after.plugin}' withheld its output: ${after.decision.reason}`,
        ),
        ran: true,
      }
    }
    return outcome
  } catch (error) {
    return {
      output: errorOutput('TOOL_FAILED', `${call.name} failed inside the agent: ${errorMessage(error)}`),
      ran: false,
    }
  }
}

/**
 * A replacement input from a `beforeTool` decision: validated with the tool's schema, equal
 * inputs are no rewrite, and an accepted one is logged (`tool/input-rewritten`) and gets
 * its facts recomputed.
 */
function reinput(rt: Runtime, current: ToolCallInfo, input: unknown, plugin: string): ReturnType<Reinput> {
  const { tool, call } = current
  const result = tool.inputSchema.safeParse(input)
  if (!result.success) {
    return {
      deny: {
        action: 'deny',
        errorCode: 'TOOL_INPUT_REWRITE_INVALID',
        reason: `plugin '${plugin}' rewrote the input into one ${tool.name} does not accept:\n${formatZodIssues(result.error)}`,
      },
    }
  }
  const next = result.data
  if (canonicalJson(next) === canonicalJson(current.input)) return undefined
  const args = JSON.stringify(next) ?? 'null'
  rt.session.append('tool/input-rewritten', {
    turn: current.turn,
    step: current.step,
    callId: call.id,
    plugin,
    arguments: args,
  })
  return { info: { ...current, input: next, facts: toolFacts(tool, next, rt.options.cwd) } }
}

interface Deferred<T> {
  promise: Promise<T>
  resolve(value: T): void
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

/** Runs `task` over `items` with at most `limit` in flight. */
async function runBounded(
  items: readonly number[],
  limit: number,
  task: (item: number) => Promise<void>,
): Promise<void> {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) await task(items[next++]!)
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}
