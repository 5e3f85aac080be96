import type { ToolCallBlock, ToolResultMessage } from '@keel/llm'
import type { ErrorRecord, SessionEvent } from '@keel/session'
import type { ToolProgress } from '@keel/tools'
import type { DisplayNotice } from './plugin.js'

/** A piece of streamed model output, shown live and never persisted token by token. */
export interface StreamDelta {
  readonly turn: number
  readonly step: number
  readonly text: string
}

/** A fragment of a tool call the model is streaming (`id` and `name` arrive with the first one). */
export interface ToolCallDelta {
  readonly turn: number
  readonly step: number
  /** The call's position in the message's tool calls. */
  readonly index: number
  readonly id?: string
  readonly name?: string
  readonly argumentsDelta: string
}

/** A tool call that is about to run (its permission was granted). */
export interface ToolCallStarted {
  readonly turn: number
  readonly step: number
  readonly call: ToolCallBlock
}

/** A tool call whose result is being committed (in model order). */
export interface ToolCallFinished {
  readonly turn: number
  readonly step: number
  readonly call: ToolCallBlock
  readonly result: ToolResultMessage
  /** Set when the call failed, was denied or blocked (`TOOL_INPUT_INVALID`, `TOOL_DENIED`, …). */
  readonly errorCode?: string
  /** Whether the tool's `call` actually ran. */
  readonly ran: boolean
  /** The permission chain refused the call (the plugin that denied or asked), as `tool/result.refusedBy`. */
  readonly refusedBy?: string
}

/** Live progress of a running tool. */
export interface ToolProgressNotice {
  readonly turn: number
  readonly step: number
  readonly call: ToolCallBlock
  readonly progress: ToolProgress
}

/**
 * A model call failed and will be retried after `delayMs` (also logged as `llm/retry`):
 * show the wait to the user. `retryAfterMs` is what the server asked for (`Retry-After`),
 * which `delayMs` honours up to `retry.maxRetryAfterMs`.
 */
export interface RetryNotice {
  readonly turn: number
  readonly step: number
  /** The failed attempt (from 1). */
  readonly attempt: number
  readonly delayMs: number
  readonly error: ErrorRecord
  readonly retryAfterMs?: number
}

/**
 * Something the user should know that is not an error of the turn: the answer hit the
 * output token limit (`OUTPUT_LIMIT`), the provider's content filter stopped it
 * (`CONTENT_FILTERED`), a resumed session kept the system prompt of its log
 * (`SYSTEM_PROMPT_KEPT`), a plugin blocked a message (`PROMPT_BLOCKED`).
 */
export interface AgentNotice {
  readonly code: string
  readonly message: string
  readonly turn?: number
  readonly step?: number
}

/**
 * Live callbacks for UIs. All optional; called synchronously in the agent's flow, so keep
 * them cheap. An observer that throws is reported to the agent's `logger` (code
 * `OBSERVER_FAILED`) and otherwise ignored: a broken display never breaks a turn.
 */
export interface AgentObserver {
  /** Every event committed to the session while the agent is open (plugins' events included). */
  onEvent?(event: SessionEvent): void
  onTextDelta?(delta: StreamDelta): void
  onReasoningDelta?(delta: StreamDelta): void
  /** The model is streaming a tool call (before it is complete or run). */
  onToolCallDelta?(delta: ToolCallDelta): void
  onToolCallStarted?(info: ToolCallStarted): void
  onToolCallFinished?(info: ToolCallFinished): void
  onToolProgress?(notice: ToolProgressNotice): void
  onRetry?(notice: RetryNotice): void
  /** See {@link AgentNotice}. */
  onNotice?(notice: AgentNotice): void
  /** Something a plugin wants shown (`ctx.display`). */
  onDisplay?(notice: DisplayNotice): void
}
