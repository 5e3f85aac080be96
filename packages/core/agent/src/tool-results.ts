import { elide, errorRecordOf, MAX_ERROR_KEY_CHARS } from '@keel/base'
import type { ToolCallBlock, ToolResultMessage } from '@keel/llm'
import type { SessionEventMap } from '@keel/session'
import { capOutput, capsFor, errorOutput, type Tool, type ToolOutput } from '@keel/tools'
import type { Runtime } from './runtime.js'

/** What became of one tool call: its output, where a capped output went, and whether the tool ran. */
export interface ToolOutcome {
  output: ToolOutput
  storedAside?: { path: string; chars: number }
  ran: boolean
  /** The permission chain refused the call: the plugin whose vote denied it or whose ask was refused. */
  refusedBy?: string
}

/**
 * The one way to build the result of a call that did not run (or whose output is withheld):
 * `Error [<code>]: <tool> was not run: <why>`.
 */
export function notRun(call: ToolCallBlock, code: string, why: string): ToolOutcome {
  return {
    output: errorOutput(code, `${elide(call.name, MAX_ERROR_KEY_CHARS)} was not run: ${why}`),
    ran: false,
  }
}

/** A call the turn's abort stopped before it ran. */
export function abortedCall(call: ToolCallBlock): ToolOutcome {
  return notRun(call, 'TOOL_ABORTED', 'the turn was aborted.')
}

/**
 * Every result goes through the size cap before it is committed, whatever built it: the
 * tool's own output (already capped by `executeTool`; capping again changes nothing), an
 * invalid-arguments error, a denial or a plugin's block reason. So no result, error or
 * not, sends the model more than `maxResultChars` (the complete text is stored aside).
 */
export async function capOutcome(
  rt: Runtime,
  call: ToolCallBlock,
  tool: Tool<unknown> | undefined,
  outcome: ToolOutcome,
): Promise<ToolOutcome> {
  const maxResultChars = rt.options.maxResultChars
  const caps = capsFor(
    tool,
    { session: rt.session },
    maxResultChars === undefined
      ? { outputDir: rt.options.toolOutputDir }
      : { outputDir: rt.options.toolOutputDir, maxResultChars },
  )
  const capped = await capOutput(outcome.output, call.id, caps)
  const storedAside = capped.storedAside ?? outcome.storedAside
  // Everything but the output is kept: who refused the call is part of its result.
  const out: ToolOutcome = { ...outcome, output: capped.output }
  if (storedAside !== undefined) out.storedAside = storedAside
  return out
}

function resultData(
  turn: number,
  step: number,
  call: ToolCallBlock,
  outcome: ToolOutcome,
): SessionEventMap['tool/result'] {
  const message: ToolResultMessage = {
    role: 'tool',
    toolCallId: call.id,
    toolName: call.name,
    content: outcome.output.content,
  }
  if (outcome.output.isError) message.isError = true
  const data: SessionEventMap['tool/result'] = { turn, step, message }
  if (outcome.output.isError) data.errorCode = outcome.output.errorCode ?? 'TOOL_FAILED'
  if (outcome.refusedBy !== undefined) data.refusedBy = outcome.refusedBy
  if (outcome.storedAside) data.storedAside = outcome.storedAside
  return data
}

/**
 * Commits a call's `tool/result` and tells the observers. A result the log refuses (invalid
 * data, too large for the store) is replaced by an error result `TOOL_RESULT_UNCOMMITTED`
 * saying so, so the step can still end; if the log refuses that too, the error propagates
 * (the turn closes, or the store answers the call when the session is reopened).
 */
export function commitResult(
  rt: Runtime,
  turn: number,
  step: number,
  call: ToolCallBlock,
  outcome: ToolOutcome,
): void {
  let committed = outcome
  let data = resultData(turn, step, call, outcome)
  try {
    rt.session.append('tool/result', data)
  } catch (error) {
    const { code, message: reason } = errorRecordOf(error, 'APPEND_FAILED')
    committed = {
      output: errorOutput(
        'TOOL_RESULT_UNCOMMITTED',
        `${call.name} ${outcome.ran ? 'ran' : 'did not run'}, but its result could not be logged (${code}: ${reason}); the result is lost.`,
      ),
      ran: outcome.ran,
    }
    data = resultData(turn, step, call, committed)
    rt.session.append('tool/result', data)
  }
  const base = {
    turn,
    step,
    call,
    result: data.message,
    ran: committed.ran,
    ...(data.refusedBy === undefined ? {} : { refusedBy: data.refusedBy }),
  }
  rt.emit('onToolCallFinished', data.errorCode === undefined ? base : { ...base, errorCode: data.errorCode })
}
