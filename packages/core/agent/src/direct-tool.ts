// A tool call a person asks for directly (keel's `!cmd`), outside any model call. It runs
// exactly as a model's call does — the same `beforeTool` vote, answerer chain, executeTool,
// `afterTool` and size cap (`runOne`, `capOutcome`) — and is logged as a turn of its own
// with one step and no model call, so the permission events keep their turn and step.
import { elide } from '@keel/base'
import type { ToolCallBlock, ToolCallId, ToolResultMessage } from '@keel/llm'
import type { SessionEventMap } from '@keel/session'
import type { Runtime, TurnState } from './runtime.js'
import { prepare, runOne } from './tool-dispatch.js'
import { capOutcome, type ToolOutcome } from './tool-results.js'
import { closeAfterFailure } from './turn.js'

/** Options of {@link Agent.runTool}. */
export interface DirectToolOptions {
  /** Who ran it (`tool/direct-call.source`). Default `user`. */
  readonly source?: string
  /** Aborting stops the run: an open question is cancelled, a running tool sees its signal. */
  readonly signal?: AbortSignal
  /**
   * Tell the model on its next call what ran and what came out (a `user/message` with source
   * `direct/<tool>`, only when the tool ran). Default true, as Claude Code and pi do.
   */
  readonly share?: boolean
}

/** How a direct run ended. */
export interface DirectToolResult {
  /** The turn the run was logged as. */
  readonly turn: number
  readonly callId: string
  /** The result as the log holds it (`tool/direct-result.message`). */
  readonly result: ToolResultMessage
  /** Set when the tool failed or did not run (`USER_REJECTED`, `TOOL_INPUT_INVALID`, …). */
  readonly errorCode?: string
  /** The permission chain refused it: the plugin that denied it or whose question was refused. */
  readonly refusedBy?: string
  /** Whether the tool's `call` ran. */
  readonly ran: boolean
  /** Whether the run was aborted. */
  readonly aborted: boolean
}

/** Most characters of a direct run's output put into the message that tells the model. */
export const MAX_SHARED_CHARS = 30_000

/** The text of a result (images as a placeholder). */
function textOf(result: ToolResultMessage): string {
  return result.content.map((b) => (b.type === 'text' ? b.text : `[${b.mediaType} image]`)).join('\n')
}

/** What the model is told about a direct run that ran. */
export function sharedText(name: string, args: string, result: ToolResultMessage): string {
  let shown = args
  try {
    const parsed: unknown = JSON.parse(args)
    if (parsed !== null && typeof parsed === 'object' && 'command' in parsed) {
      const command = (parsed as { command: unknown }).command
      if (typeof command === 'string') shown = `\`${command}\``
    }
  } catch {
    shown = args // not JSON: shown as given
  }
  const output = elide(textOf(result), MAX_SHARED_CHARS)
  return `I ran ${shown} with the ${name} tool myself (not at your request). ${result.isError ? 'It failed' : 'Its output'}:\n${output === '' ? '(no output)' : output}`
}

/**
 * Runs one tool call directly, logged as its own turn (see `tool/direct-call`). The caller
 * makes sure no turn runs meanwhile. Never throws for the tool's behaviour (every outcome is
 * a result); a log that refuses the events throws, after closing the turn when it can.
 */
export async function runDirectTool(
  rt: Runtime,
  name: string,
  input: unknown,
  options: DirectToolOptions,
  running: (controller: AbortController | null) => void,
): Promise<DirectToolResult> {
  const session = rt.session
  const turn = session.lastTurn + 1
  const step = 1
  const controller = new AbortController()
  const onAbort = () => controller.abort(options.signal?.reason)
  if (options.signal?.aborted) controller.abort(options.signal.reason)
  else options.signal?.addEventListener('abort', onAbort, { once: true })
  running(controller)
  const callId = `direct_${turn}` as ToolCallId
  const args = JSON.stringify(input) ?? 'null'
  const call: ToolCallBlock = { type: 'tool-call', id: callId, name, arguments: args }
  const ts: TurnState = {
    turn,
    signal: controller.signal,
    usedCallIds: new Set([callId]),
    maxTokens: undefined,
    asked: new Map(),
  }
  try {
    session.append('turn/start', { turn })
    session.append('step/start', { turn, step })
    session.append('tool/direct-call', {
      turn,
      step,
      callId,
      name,
      arguments: args,
      source: options.source ?? 'user',
    })
    const prepared = prepare(rt, call, undefined)
    const outcome: ToolOutcome = await capOutcome(
      rt,
      call,
      prepared.tool,
      await runOne(rt, ts, step, prepared),
    )
    const result: ToolResultMessage = {
      role: 'tool',
      toolCallId: callId,
      toolName: name,
      content: outcome.output.content,
    }
    if (outcome.output.isError) result.isError = true
    const data: SessionEventMap['tool/direct-result'] = { turn, step, callId, message: result }
    const errorCode = outcome.output.isError ? (outcome.output.errorCode ?? 'TOOL_FAILED') : undefined
    if (errorCode !== undefined) data.errorCode = errorCode
    if (outcome.refusedBy !== undefined) data.refusedBy = outcome.refusedBy
    if (outcome.storedAside) data.storedAside = outcome.storedAside
    session.append('tool/direct-result', data)
    session.append('step/end', { turn, step })
    const aborted = controller.signal.aborted
    if (outcome.ran && !aborted && options.share !== false) {
      session.append('user/message', {
        message: { role: 'user', content: [{ type: 'text', text: sharedText(name, args, result) }] },
        source: `direct/${name}`,
      })
    }
    session.append('turn/end', { turn, reason: aborted ? 'aborted' : 'completed' })
    await rt.flush()
    const finished = {
      turn,
      step,
      call,
      result,
      ran: outcome.ran,
      ...(errorCode === undefined ? {} : { errorCode }),
      ...(outcome.refusedBy === undefined ? {} : { refusedBy: outcome.refusedBy }),
    }
    rt.emit('onToolCallFinished', finished)
    return {
      turn,
      callId,
      result,
      ran: outcome.ran,
      aborted,
      ...(errorCode === undefined ? {} : { errorCode }),
      ...(outcome.refusedBy === undefined ? {} : { refusedBy: outcome.refusedBy }),
    }
  } catch (error) {
    await closeAfterFailure(rt, turn, error)
    throw error
  } finally {
    options.signal?.removeEventListener('abort', onAbort)
    running(null)
  }
}
