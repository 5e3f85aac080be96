import { errorMessage, errorRecordOf } from '@keel/base'
import { type AssistantMessage, messageText, type ToolCallBlock, type UserMessage } from '@keel/llm'
import {
  answerUnansweredCalls,
  type ErrorRecord,
  type SessionEventMap,
  type TurnEndReason,
} from '@keel/session'
import { takeFromInbox } from './inbox.js'
import { callModel, uniqueCallIds } from './model-call.js'
import { type SendOptions, type TurnResult, toUserMessage } from './options.js'
import type { Runtime, TurnState } from './runtime.js'
import { runTools } from './tool-dispatch.js'
import { notRun, type ToolOutcome } from './tool-results.js'
import { offerTools } from './tool-sets.js'

/** One queued user message. */
export interface InboxItem {
  message: UserMessage
  source?: string
  signal?: AbortSignal
  maxTokens?: number
  /** The message waits in the inbox: taken out as the turn starts. */
  fromInbox?: boolean
  resolve(result: TurnResult): void
  reject(error: unknown): void
}

/** The inbox item of one `send` (a checked message and its options), settled through `resolve`/`reject`. */
export function inboxItem(
  message: UserMessage,
  options: SendOptions,
  settle: Pick<InboxItem, 'resolve' | 'reject'>,
): InboxItem {
  const item: InboxItem = { message, resolve: settle.resolve, reject: settle.reject }
  if (options.source !== undefined) item.source = options.source
  if (options.signal !== undefined) item.signal = options.signal
  if (options.maxTokens !== undefined) item.maxTokens = options.maxTokens
  if (options.fromInbox) item.fromInbox = true
  return item
}

/** How the turn runner lets the agent follow along (the agent owns the abort controller). */
export interface TurnHooks {
  /** Called with the turn's controller while it runs, then with null. */
  running(controller: AbortController | null): void
  /** Queues developer messages for the next step (prompt-submit context). */
  inject(text: string, source: string): void
}

type TurnEnd = { reason: TurnEndReason; error?: ErrorRecord }

/**
 * Runs one turn: the prompt-submit interceptors, then steps (before-step interceptors,
 * injections, one model call, the tools it asked for) until the model stops asking for
 * tools and no `turnStopping` interceptor continues, or the turn is aborted, rejected,
 * fails, reaches `maxSteps`, or its answer is cut (`output-limit`, `content-filter`).
 * Resolves with how it ended; rejects only when the log refused a write.
 */
export async function runTurn(rt: Runtime, item: InboxItem, hooks: TurnHooks): Promise<TurnResult> {
  const session = rt.session
  const turn = session.lastTurn + 1
  const controller = new AbortController()
  const signal = controller.signal
  const onExternalAbort = (): void => controller.abort(item.signal?.reason)
  if (item.signal?.aborted) controller.abort(item.signal.reason)
  else item.signal?.addEventListener('abort', onExternalAbort, { once: true })
  hooks.running(controller)
  const ts: TurnState = {
    turn,
    signal,
    usedCallIds: new Set(),
    asked: new Map(),
    maxTokens: item.maxTokens,
  }
  let last: AssistantMessage | undefined
  let end: TurnEnd | undefined
  try {
    const submitted = await rt.host.promptSubmit({ turn, message: item.message, signal })
    if (item.fromInbox) takeFromInbox(session, item.message)
    session.append('turn/start', { turn })
    if (submitted.blocked) {
      const message = `plugin '${submitted.blocked.plugin}' blocked the message: ${submitted.blocked.decision.reason}`
      end = { reason: 'rejected', error: { code: 'PROMPT_BLOCKED', message } }
      rt.emit('onNotice', { code: 'PROMPT_BLOCKED', message, turn })
    } else {
      session.append(
        'user/message',
        item.source === undefined
          ? { message: item.message }
          : { message: item.message, source: item.source },
      )
      for (const added of submitted.context) hooks.inject(added.text, `plugin/${added.plugin}`)
      const steps = await runSteps(rt, ts)
      end = steps.end
      last = steps.last
    }
    session.append(
      'turn/end',
      end.error ? { turn, reason: end.reason, error: end.error } : { turn, reason: end.reason },
    )
    await rt.flush()
  } catch (error) {
    await closeAfterFailure(rt, turn, error)
    throw error
  } finally {
    item.signal?.removeEventListener('abort', onExternalAbort)
    hooks.running(null)
  }
  const result: { -readonly [K in keyof TurnResult]: TurnResult[K] } = {
    turn,
    reason: end.reason,
    text: last ? messageText(last) : '',
  }
  if (end.error) result.error = end.error
  if (last) result.message = last
  return result
}

async function runSteps(rt: Runtime, ts: TurnState): Promise<{ end: TurnEnd; last?: AssistantMessage }> {
  const { turn, signal } = ts
  const session = rt.session
  let step = 0
  let last: AssistantMessage | undefined
  for (;;) {
    if (signal.aborted) return { end: { reason: 'aborted' }, last }
    if (step >= rt.options.maxSteps) return { end: { reason: 'max-steps' }, last }
    const next = step + 1
    const before = await rt.host.beforeStep({ turn, step: next, signal })
    if (before.decision.action === 'reject') {
      const message = `plugin '${before.plugin}' rejected step ${next}: ${before.decision.reason}`
      return { end: { reason: 'rejected', error: { code: 'STEP_REJECTED', message } }, last }
    }
    if (signal.aborted) continue
    offerTools(
      {
        session,
        board: rt.board,
        notice: (code, message, t, s) => rt.emit('onNotice', { code, message, turn: t, step: s }),
      },
      turn,
      next,
    )
    rt.drainInjections()
    step = next
    session.append('step/start', { turn, step })
    const outcome = await callModel(rt, ts, step)
    if (outcome.kind !== 'message') {
      if (outcome.message) last = outcome.message
      session.append('step/end', { turn, step })
      if (outcome.kind === 'failed') return { end: { reason: 'error', error: outcome.error }, last }
      return { end: { reason: 'aborted' }, last }
    }
    const message = uniqueCallIds(outcome.message, ts.usedCallIds, step)
    const data: SessionEventMap['assistant/message'] = { turn, step, message, stream: outcome.record }
    if (outcome.usage) data.usage = outcome.usage
    session.append('assistant/message', data)
    last = message
    const calls = message.content.filter((b): b is ToolCallBlock => b.type === 'tool-call')
    const cut = cutOff(rt, ts, step, outcome.finishReason, calls)
    if (calls.length > 0) await runTools(rt, ts, step, calls, cut.settled)
    session.append('step/end', { turn, step })
    if (signal.aborted) return { end: { reason: 'aborted' }, last }
    if (cut.end) return { end: cut.end, last }
    if (calls.length > 0) continue
    const stopping = await rt.host.turnStopping({ turn, step, signal })
    if (signal.aborted) return { end: { reason: 'aborted' }, last }
    if (stopping.decision.action !== 'continue') return { end: { reason: 'completed' }, last }
    let continuation: UserMessage
    try {
      continuation = toUserMessage(stopping.decision.message, `turnStopping of plugin '${stopping.plugin}'`)
    } catch (error) {
      return { end: { reason: 'rejected', error: errorRecordOf(error, 'AGENT_FAILED') }, last }
    }
    session.append('user/message', { message: continuation, source: `plugin/${stopping.plugin}` })
  }
}

/**
 * What a cut answer means. `length`: calls whose arguments are not complete JSON were cut
 * by the output limit and are answered `TOOL_OUTPUT_LIMIT` (not run; complete calls run);
 * with no call at all the turn ends `output-limit`. `content-filter`: no call runs and the
 * turn ends `content-filter`. Observers get an `onNotice` either way.
 */
function cutOff(
  rt: Runtime,
  ts: TurnState,
  step: number,
  finishReason: string,
  calls: readonly ToolCallBlock[],
): { settled: Map<string, ToolOutcome>; end?: TurnEnd } {
  const settled = new Map<string, ToolOutcome>()
  const { turn } = ts
  const maxTokens = ts.route?.maxTokens
  const limit =
    maxTokens === undefined ? 'the output token limit' : `the output token limit (max_tokens ${maxTokens})`
  if (finishReason === 'length') {
    for (const call of calls) {
      if (isJson(call.arguments)) continue
      settled.set(
        call.id,
        notRun(
          call,
          'TOOL_OUTPUT_LIMIT',
          `the answer hit ${limit} while this call's arguments were being written, so they are cut off. Send smaller arguments (for example, write a large file in several parts).`,
        ),
      )
    }
    const message = `the model's answer was cut off at ${limit}${settled.size > 0 ? `; ${settled.size} cut-off tool call(s) were not run` : ''}`
    rt.emit('onNotice', { code: 'OUTPUT_LIMIT', message, turn, step })
    if (calls.length === 0)
      return { settled, end: { reason: 'output-limit', error: { code: 'OUTPUT_LIMIT', message } } }
  } else if (finishReason === 'content-filter') {
    for (const call of calls) {
      settled.set(
        call.id,
        notRun(call, 'TOOL_CONTENT_FILTERED', "the provider's content filter stopped the answer."),
      )
    }
    const message = "the provider's content filter stopped the model's answer"
    rt.emit('onNotice', { code: 'CONTENT_FILTERED', message, turn, step })
    return { settled, end: { reason: 'content-filter', error: { code: 'CONTENT_FILTERED', message } } }
  }
  return { settled }
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text)
    return true
  } catch {
    // Not JSON: the arguments were cut.
    return false
  }
}

/**
 * Something unexpected threw (a store write, a bug): end the turn honestly if the log
 * still accepts it — unanswered calls answered, the step and the turn closed.
 */
export async function closeAfterFailure(rt: Runtime, turn: number, error: unknown): Promise<void> {
  const session = rt.session
  const open = session.openTurn
  if (open?.turn !== turn) return
  const failure = errorRecordOf(error, 'AGENT_FAILED')
  try {
    answerUnansweredCalls(session, {
      errorCode: 'TOOL_INTERRUPTED',
      text: (call) =>
        `${call.name} has no logged result: the agent failed before it could record one (${failure.code}: ${failure.message}).`,
    })
    if (open.step !== null) session.append('step/end', { turn, step: open.step })
    session.append('turn/end', { turn, reason: 'error', error: failure })
    await rt.flush()
  } catch (closing) {
    // The log refuses writes (that is what failed); the store closes the turn as
    // `interrupted` and answers its calls when the session is next opened.
    rt.log({
      code: 'TURN_CLOSE_FAILED',
      message: `turn ${turn} could not be closed after ${failure.code}: ${errorMessage(closing)}`,
    })
  }
}
