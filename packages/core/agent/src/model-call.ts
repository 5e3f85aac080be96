import { errorRecordOf, isKeelError } from '@keel/base'
import {
  type AssistantMessage,
  type ContentDelta,
  type FinishReason,
  LlmError,
  MessageAssembly,
  type StreamRecord,
  type TokenUsage,
  type ToolCallBlock,
  withAnsweredToolCalls,
} from '@keel/llm'
import { answerUnansweredCalls, type ErrorRecord, type SessionEventMap } from '@keel/session'
import type { ToolCallDelta } from './observer.js'
import { recordRequest } from './request-record.js'
import { backoffDelay, sleep } from './retry.js'
import type { Runtime, TurnState } from './runtime.js'
import { commitResult, notRun } from './tool-results.js'

/** How one step's model call ended. */
export type ModelOutcome =
  | {
      kind: 'message'
      message: AssistantMessage
      finishReason: FinishReason
      usage?: TokenUsage
      record: StreamRecord
    }
  /** Aborted; `message` is the delivered prefix when one was committed. */
  | { kind: 'interrupted'; message?: AssistantMessage }
  /** Failed for good; `message` is the delivered prefix when one was committed. */
  | { kind: 'failed'; error: ErrorRecord; message?: AssistantMessage }

type AttemptResult =
  | {
      ok: true
      message: AssistantMessage
      finishReason: FinishReason
      usage?: TokenUsage
      record: StreamRecord
    }
  | { ok: false; error: unknown; partial?: AssistantMessage; usage?: TokenUsage; record: StreamRecord }

/** Calls already answered in the open step would be reported here; the loop never leaves any. */
const unansweredBeforeCall = {
  errorCode: 'TOOL_INTERRUPTED',
  text: (call: { name: string }) =>
    `${call.name} had no result when the next model call started; it is treated as not finished.`,
}

/**
 * Logs written before every call was answered may hold a closed turn with an open call (a
 * crash mid-tool): the request answers it (not the log, which no longer accepts results in
 * that turn), so such a session stays usable.
 */
const legacyAnswer = {
  errorCode: 'TOOL_INTERRUPTED',
  text: (call: { name: string }) =>
    `${call.name} did not finish: the process stopped before the tool returned its result. Its effects, if any, are unknown; check before repeating it.`,
}

/** A failed model call as a record: a typed error as it is, anything else `LLM_ADAPTER_FAILED`. */
function modelErrorRecord(error: unknown): ErrorRecord {
  const record = errorRecordOf(error, 'LLM_ADAPTER_FAILED')
  if (isKeelError(error)) return record
  return { ...record, message: `the model adapter failed unexpectedly: ${record.message}` }
}

/**
 * One step's model call with retries: every failed attempt is logged (`assistant/attempt`),
 * a retryable one is retried after a backoff (`llm/retry`, `onRetry` with the wait), and a
 * final failure is offered to the `modelError` interceptors, which may re-run the call once.
 * An abort, or a final failure that had delivered something, keeps the adapter's delivered
 * prefix (`LlmError.partial`) as an interrupted `assistant/message`.
 */
export async function callModel(rt: Runtime, ts: TurnState, step: number): Promise<ModelOutcome> {
  const { turn, signal } = ts
  let pluginRetried = false
  try {
    ts.route = rt.route(ts.maxTokens)
  } catch (error) {
    // A model.active provider that answered nonsense: the step fails, nothing is sent.
    return { kind: 'failed', error: modelErrorRecord(error) }
  }
  for (let attempt = 1, failures = 0; ; attempt++) {
    answerUnansweredCalls(rt.session, unansweredBeforeCall)
    recordRequest(rt.session, { turn, step }, ts.route, rt.session.deriveMessages(), rt.specs, rt.requests)
    await rt.flush()
    const result = await attemptOnce(rt, ts, step)
    if (result.ok) {
      const done: ModelOutcome = {
        kind: 'message',
        message: result.message,
        finishReason: result.finishReason,
        record: result.record,
      }
      if (result.usage) done.usage = result.usage
      return done
    }
    if (signal.aborted) return commitPartial(rt, ts, step, attempt, result, 'aborted')
    const error = modelErrorRecord(result.error)
    rt.session.append('assistant/attempt', { turn, step, attempt, stream: result.record, error })
    const llmError = result.error instanceof LlmError ? result.error : undefined
    failures++
    if (llmError?.retryable && failures <= rt.options.retry.maxRetries) {
      const delayMs = backoffDelay(failures, rt.options.retry, rt.options.random, llmError.retryAfterMs)
      const retry: SessionEventMap['llm/retry'] = { turn, step, attempt, delayMs, error }
      if (llmError.status !== undefined) retry.status = llmError.status
      if (llmError.retryAfterMs !== undefined)
        retry.retryAfterMs = Math.max(0, Math.round(llmError.retryAfterMs))
      rt.session.append('llm/retry', retry)
      rt.emit(
        'onRetry',
        retry.retryAfterMs === undefined
          ? { turn, step, attempt, delayMs, error }
          : {
              turn,
              step,
              attempt,
              delayMs,
              error,
              retryAfterMs: retry.retryAfterMs,
            },
      )
      if (!(await sleep(rt.options.clock, delayMs, signal))) return { kind: 'interrupted' }
      continue
    }
    if (!pluginRetried && llmError) {
      const decided = await rt.host.modelError({ turn, step, error: llmError, signal })
      // Cancelled while a plugin recovered (an overflow compaction): the turn was aborted.
      if (signal.aborted) return commitPartial(rt, ts, step, attempt, result, 'aborted')
      if (decided.decision.action === 'retry') {
        // One more attempt, without a further backoff budget.
        pluginRetried = true
        failures = rt.options.retry.maxRetries
        continue
      }
    }
    const final = llmError?.retryable
      ? {
          code: error.code,
          message: `${error.message.trim().replace(/\.+$/u, '')} (gave up after ${attempt} attempt${attempt === 1 ? '' : 's'}).`,
        }
      : error
    const committed = commitPartial(rt, ts, step, attempt, result, 'failed')
    return committed.message
      ? { kind: 'failed', error: final, message: committed.message }
      : { kind: 'failed', error: final }
  }
}

/** The message `deltas` make, as far as they go. */
function assembled(deltas: readonly ContentDelta[]): AssistantMessage {
  const assembly = new MessageAssembly()
  for (const delta of deltas) assembly.accept(delta)
  return assembly.partial()
}

async function attemptOnce(rt: Runtime, ts: TurnState, step: number): Promise<AttemptResult> {
  const { turn, signal } = ts
  const clock = rt.options.clock
  const startedAt = clock.now()
  let firstChunkAt: number | undefined
  let chunks = 0
  let usage: TokenUsage | undefined
  const route = ts.route ?? rt.route(ts.maxTokens)
  const model = route.model
  // What the user was shown: on an abort this, not the adapter's buffer, is the prefix kept
  // (assembled only then).
  const shown: ContentDelta[] = []
  try {
    const stream = rt.llm.stream({
      model,
      messages: withAnsweredToolCalls(rt.session.deriveMessages(), legacyAnswer).slice(),
      tools: rt.specs,
      maxTokens: route.maxTokens,
      ...(route.reasoningEffort === undefined ? {} : { reasoningEffort: route.reasoningEffort }),
      signal,
    })
    for await (const chunk of stream) {
      if (chunk.type === 'finish') {
        if (signal.aborted) throw new LlmError('aborted', 'the turn was aborted during the model stream')
        const done: AttemptResult = {
          ok: true,
          message: chunk.message,
          finishReason: chunk.reason,
          record: chunk.record,
        }
        const finalUsage = chunk.usage ?? usage
        if (finalUsage) done.usage = finalUsage
        return done
      }
      // After an abort the adapter ends the stream; what it still hands over is not shown.
      if (signal.aborted) continue
      chunks++
      if (firstChunkAt === undefined) firstChunkAt = clock.now()
      if (chunk.type !== 'usage') shown.push(chunk)
      if (chunk.type === 'usage') usage = chunk.usage
      else if (chunk.type === 'text-delta') rt.emit('onTextDelta', { turn, step, text: chunk.text })
      else if (chunk.type === 'reasoning-delta') rt.emit('onReasoningDelta', { turn, step, text: chunk.text })
      else {
        const delta: { -readonly [K in keyof ToolCallDelta]: ToolCallDelta[K] } = {
          turn,
          step,
          index: chunk.index,
          argumentsDelta: chunk.argumentsDelta,
        }
        if (chunk.id !== undefined) delta.id = chunk.id
        if (chunk.name !== undefined) delta.name = chunk.name
        rt.emit('onToolCallDelta', delta)
      }
    }
    if (signal.aborted) throw new LlmError('aborted', 'the turn was aborted during the model stream')
    throw new LlmError('malformed-response', `the ${rt.llm.provider} stream ended without a finish chunk`)
  } catch (error) {
    // The adapter's record of the failed call when it has one (it knows the response id
    // and the wire chunks); otherwise what the agent saw.
    let record: StreamRecord
    if (error instanceof LlmError && error.record) record = error.record
    else {
      record = {
        provider: rt.llm.provider,
        model,
        startedAt,
        endedAt: clock.now(),
        chunks,
      }
      if (firstChunkAt !== undefined) record.firstChunkAt = firstChunkAt
    }
    const failed: AttemptResult = { ok: false, error, record }
    if (signal.aborted) failed.partial = assembled(shown)
    else if (error instanceof LlmError && error.partial) failed.partial = error.partial
    if (usage) failed.usage = usage
    return failed
  }
}

/**
 * An abort mid-stream, or a final failure after something was delivered: the delivered
 * prefix (on an abort, what the user was shown; on a failure, the adapter's
 * `LlmError.partial`) becomes an interrupted `assistant/message` (its complete tool calls
 * logged and answered as not run, so the history stays well-formed). An abort with
 * nothing delivered is logged as an attempt instead.
 */
function commitPartial(
  rt: Runtime,
  ts: TurnState,
  step: number,
  attempt: number,
  result: Extract<AttemptResult, { ok: false }>,
  why: 'aborted' | 'failed',
): { kind: 'interrupted'; message?: AssistantMessage } {
  const { turn } = ts
  const message = uniqueCallIds(result.partial ?? { role: 'assistant', content: [] }, ts.usedCallIds, step)
  if (message.content.length === 0) {
    if (why === 'aborted') {
      rt.session.append('assistant/attempt', {
        turn,
        step,
        attempt,
        stream: result.record,
        error: {
          code: 'LLM_ABORTED',
          message: 'the turn was aborted before the model delivered any content',
        },
      })
    }
    return { kind: 'interrupted' }
  }
  const data: SessionEventMap['assistant/message'] = {
    turn,
    step,
    message,
    stream: result.record,
    interrupted: true,
  }
  if (result.usage) data.usage = result.usage
  rt.session.append('assistant/message', data)
  const calls = message.content.filter((b): b is ToolCallBlock => b.type === 'tool-call')
  for (const call of calls) {
    rt.session.append('tool/call', {
      turn,
      step,
      callId: call.id,
      name: call.name,
      arguments: call.arguments,
    })
  }
  for (const call of calls) {
    const outcome =
      why === 'aborted'
        ? notRun(call, 'TOOL_ABORTED', 'the turn was aborted.')
        : notRun(call, 'TOOL_NOT_RUN', 'the model call failed before the answer was complete.')
    commitResult(rt, turn, step, call, outcome)
  }
  return { kind: 'interrupted', message }
}

/**
 * Tool call ids must be unique within a turn (they pair calls with results). Some
 * OpenAI-compatible servers reuse ids (`call_0` every step): a reused id gets a
 * `_<step>_<index>` suffix, so the history sent back stays well-formed. Ids are otherwise
 * kept exactly as the model sent them. Records the ids in `used`.
 */
export function uniqueCallIds(message: AssistantMessage, used: Set<string>, step: number): AssistantMessage {
  let changed = false
  let index = 0
  const content = message.content.map((block) => {
    if (block.type !== 'tool-call') return block
    let id: string = block.id
    if (used.has(id)) {
      const base = `${block.id}_${step}_${index}`
      id = base
      for (let n = 2; used.has(id); n++) id = `${base}_${n}`
      changed = true
    }
    used.add(id)
    index++
    return id === block.id ? block : { ...block, id: id as ToolCallBlock['id'] }
  })
  return changed ? { ...message, content } : message
}
