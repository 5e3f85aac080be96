import type {
  AssistantMessage,
  DeveloperMessage,
  StreamRecord,
  SystemMessage,
  TokenUsage,
  ToolCallId,
  ToolResultMessage,
  UserMessage,
} from '@keel/llm'
import type { SessionId, SessionSeq } from './types.js'
import './events.generated.js'

/**
 * Why a turn ended.
 * - `completed`: the model answered without asking for more tools.
 * - `aborted`: the user or the host cancelled the turn.
 * - `error`: a model or runtime failure that retries did not cure.
 * - `max-steps`: the turn reached its step limit.
 * - `rejected`: a plugin refused to start the next step, blocked the user message
 *   (`PROMPT_BLOCKED`; the message is then not logged), or continued with an invalid one.
 * - `interrupted`: the process died mid-turn; written when the session is next opened
 *   (after a `TOOL_INTERRUPTED` result for every call that had none).
 * - `output-limit`: the model's answer was cut by the output token limit (`max_tokens`,
 *   finish reason `length`) and asked for no tool; its text is kept as it was cut.
 * - `content-filter`: the provider's content filter stopped the answer.
 */
export type TurnEndReason =
  | 'completed'
  | 'aborted'
  | 'error'
  | 'max-steps'
  | 'rejected'
  | 'interrupted'
  | 'output-limit'
  | 'content-filter'

/** A failure recorded in the log: a stable code and the message shown to people. */
export interface ErrorRecord {
  /** @minLength 1 */
  code: string
  message: string
}

/** Where a tool output too large for the model's view was stored in full. */
export interface StoredAside {
  /** @minLength 1 */
  path: string
  /**
   * Length of the full output, in characters.
   * @integer
   * @minimum 0
   */
  chars: number
}

/** The turn an event belongs to. */
export interface TurnRef {
  /**
   * Turn number: from 1, increasing by one, never repeated within a session.
   * @integer
   * @minimum 1
   */
  turn: number
}

/** The turn and step an event belongs to. */
export interface StepRef extends TurnRef {
  /**
   * Step number within the turn, from 1.
   * @integer
   * @minimum 1
   */
  step: number
}

/** What produced a message that was not typed by a person (`schedule/<id>`, …). */
export interface MessageSource {
  /**
   * Names the producer; absent for a message a person typed.
   * @minLength 1
   */
  source?: string
}

/**
 * Every event a session log may hold, keyed by event type (`owner/verb`). The core events
 * are declared here; a plugin adds its own by augmenting this interface from its
 * `src/events.ts` (`declare module '@keel/session' { interface SessionEventMap { … } }`)
 * and runs `pnpm gen-persistence-catalog`, which generates the runtime validator of each
 * into the package's `src/events.generated.ts`. Every member carries JSDoc: it is rendered
 * into the persistence catalog; refinements are JSDoc tags (`@integer`, `@minLength 1`, …).
 */
export interface SessionEventMap {
  /**
   * A turn began: the agent took one user message (or a scheduled one) and will run
   * steps until the model stops asking for tools. Turn numbers increase by one from 1
   * and never repeat within a session, forks included.
   * @example {"turn":1}
   */
  'turn/start': TurnRef

  /**
   * The open turn ended. Always follows its `turn/start`, after the turn's last
   * `step/end`. `error` says what failed when `reason` is `error`.
   * @example {"turn":1,"reason":"completed"}
   */
  'turn/end': TurnRef & { reason: TurnEndReason; error?: ErrorRecord }

  /**
   * One model call and the tool calls it asked for begin. Steps number from 1 within a turn.
   * @example {"turn":1,"step":1}
   */
  'step/start': StepRef

  /**
   * The open step ended; every tool call it committed has its result before this.
   * @example {"turn":1,"step":1}
   */
  'step/end': StepRef

  /**
   * A user message, on the surface. `source` names what produced it when it was not typed
   * by a person (for example `schedule/<id>` for a scheduled reminder).
   * @example {"message":{"role":"user","content":[{"type":"text","text":"List the files."}]}}
   */
  'user/message': MessageSource & { message: UserMessage }

  /**
   * The assembled model answer of one step, on the surface. `usage` is the provider's
   * token accounting when it reported one. A turn aborted mid-stream, or whose model call
   * failed for good after delivering something, keeps the delivered prefix here with
   * `interrupted: true`; tool calls that were not complete are left out, complete ones are
   * answered as not run (`TOOL_ABORTED`, `TOOL_NOT_RUN`).
   * @example {"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"reasoning","text":"Use the shell."},{"type":"tool-call","id":"call-1","name":"shell","arguments":"{\"command\":\"ls\"}"}]},"stream":{"provider":"deepseek","model":"deepseek-chat","startedAt":1700000003000,"endedAt":1700000004000,"finishReason":"tool-calls","chunks":12},"usage":{"inputTokens":120,"outputTokens":30,"totalTokens":150,"cacheHitTokens":100,"cacheMissTokens":20}}
   */
  'assistant/message': StepRef & {
    message: AssistantMessage
    /** Facts of the model call that produced the message. */
    stream: StreamRecord
    usage?: TokenUsage
    interrupted?: true
  }

  /**
   * A model call that settled without committing a message: it failed, was retried or was
   * aborted before any content. Log-only, so it never fabricates history the model sees.
   * `attempt` counts from 1 within the step.
   * @example {"turn":1,"step":1,"attempt":1,"stream":{"provider":"deepseek","model":"deepseek-chat","startedAt":1700000002000,"endedAt":1700000002500,"chunks":0},"error":{"code":"LLM_RATE_LIMIT","message":"rate limited"}}
   */
  'assistant/attempt': StepRef & {
    /**
     * @integer
     * @minimum 1
     */
    attempt: number
    stream: StreamRecord
    error: ErrorRecord
  }

  /**
   * Operator instructions, on the surface; usually the first event of a session.
   * @example {"message":{"role":"system","content":[{"type":"text","text":"You are a careful coding agent."}]}}
   */
  'system/message': { message: SystemMessage }

  /**
   * A harness notice to the model (a reminder, a runtime change), on the surface.
   * @example {"message":{"role":"developer","content":[{"type":"text","text":"Reminder: keep the todo list current."}]},"source":"todo/reminder"}
   */
  'developer/message': MessageSource & { message: DeveloperMessage }

  /**
   * The model asked to run a tool. Log-only (the call is also part of the assistant
   * message). `arguments` is the raw JSON text exactly as the model sent it.
   * @example {"turn":1,"step":1,"callId":"call-1","name":"shell","arguments":"{\"command\":\"ls\"}"}
   */
  'tool/call': StepRef & {
    callId: ToolCallId
    /** @minLength 1 */
    name: string
    arguments: string
  }

  /**
   * The result of one `tool/call` of the same turn, on the surface. `errorCode` is set when
   * the call failed (`TOOL_INPUT_INVALID`, `TOOL_DENIED`, …). `refusedBy` is set when the
   * permission chain refused it before it ran: the plugin whose vote denied it, or whose
   * ask the answerers refused (`@keel/agent` when no plugin is named). `storedAside` says where the
   * full output went when it exceeded the tool's size cap and the model got a truncated view.
   * A result may also be rewritten later: a `tool/result` whose `surfaceOp` replaces exactly
   * one earlier result of the same call (same call id, turn and step) is accepted anywhere,
   * outside its step too (compaction uses it to swap an old output for a placeholder).
   * @example {"turn":1,"step":1,"message":{"role":"tool","toolCallId":"call-1","toolName":"shell","content":[{"type":"text","text":"README.md\npackage.json"}]},"storedAside":{"path":"outputs/call-1.txt","chars":40000}}
   */
  'tool/result': StepRef & {
    message: ToolResultMessage
    /** @minLength 1 */
    errorCode?: string
    /** @minLength 1 */
    refusedBy?: string
    storedAside?: StoredAside
  }

  /**
   * Marks the end of history copied from a parent session by a fork: events before it
   * were inherited, events after it are this session's own work.
   * @example {"parentSession":"golden-parent","parentSeq":0}
   */
  'session/end-seed': { parentSession: SessionId; parentSeq: SessionSeq }
}
