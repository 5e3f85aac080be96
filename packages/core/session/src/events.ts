import {
  type AssistantMessage,
  assistantMessageSchema,
  type DeveloperMessage,
  developerMessageSchema,
  type StreamRecord,
  type SystemMessage,
  streamRecordSchema,
  systemMessageSchema,
  type TokenUsage,
  type ToolCallId,
  type ToolResultMessage,
  tokenUsageSchema,
  toolCallIdSchema,
  toolResultMessageSchema,
  type UserMessage,
  userMessageSchema,
} from '@keel/llm'
import { z } from 'zod'
import { registerEvents, sessionIdSchema, sessionSeqSchema } from './registry.js'
import type { SessionId, SessionSeq } from './types.js'

/**
 * Why a turn ended.
 * - `completed`: the model answered without asking for more tools.
 * - `aborted`: the user or the host cancelled the turn.
 * - `error`: a model or runtime failure that retries did not cure.
 * - `max-steps`: the turn reached its step limit.
 * - `rejected`: a plugin refused to start the next step.
 * - `interrupted`: the process died mid-turn; written when the session is next opened.
 */
export type TurnEndReason = 'completed' | 'aborted' | 'error' | 'max-steps' | 'rejected' | 'interrupted'

/** A failure recorded in the log: a stable code and the message shown to people. */
export interface ErrorRecord {
  code: string
  message: string
}

/**
 * Every event a session log may hold, keyed by event type (`owner/verb`). The core events
 * are declared here; a plugin adds its own by augmenting this interface from its
 * `src/events.ts` (`declare module '@keel/session' { interface SessionEventMap { … } }`)
 * and registering a runtime schema for each with {@link registerEvents}. Every member
 * carries JSDoc: it is rendered into the persistence catalog.
 */
export interface SessionEventMap {
  /**
   * A turn began: the agent took one user message (or a scheduled one) and will run
   * steps until the model stops asking for tools. Turn numbers increase by one from 1
   * and never repeat within a session, forks included.
   */
  'turn/start': { turn: number }

  /**
   * The open turn ended. Always follows its `turn/start`, after the turn's last
   * `step/end`. `error` says what failed when `reason` is `error`.
   */
  'turn/end': { turn: number; reason: TurnEndReason; error?: ErrorRecord }

  /** One model call and the tool calls it asked for begin. Steps number from 1 within a turn. */
  'step/start': { turn: number; step: number }

  /** The open step ended; every tool call it committed has its result before this. */
  'step/end': { turn: number; step: number }

  /**
   * A user message, on the surface. `source` names what produced it when it was not typed
   * by a person (for example `schedule/<id>` for a scheduled reminder).
   */
  'user/message': { message: UserMessage; source?: string }

  /**
   * The assembled model answer of one step, on the surface. `usage` is the provider's
   * token accounting when it reported one. A turn aborted mid-stream keeps the delivered
   * prefix here with `interrupted: true`; tool calls that were not complete are left out.
   */
  'assistant/message': {
    turn: number
    step: number
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
   */
  'assistant/attempt': {
    turn: number
    step: number
    attempt: number
    stream: StreamRecord
    error: ErrorRecord
  }

  /** Operator instructions, on the surface; usually the first event of a session. */
  'system/message': { message: SystemMessage }

  /** A harness notice to the model (a reminder, a runtime change), on the surface. */
  'developer/message': { message: DeveloperMessage; source?: string }

  /**
   * The model asked to run a tool. Log-only (the call is also part of the assistant
   * message). `arguments` is the raw JSON text exactly as the model sent it.
   */
  'tool/call': { turn: number; step: number; callId: ToolCallId; name: string; arguments: string }

  /**
   * The result of one `tool/call` of the same turn, on the surface. `errorCode` is set when
   * the call failed (`TOOL_INPUT_INVALID`, `TOOL_DENIED`, …). `storedAside` says where the
   * full output went when it exceeded the tool's size cap and the model got a truncated view.
   * A result may also be rewritten later: a `tool/result` whose `surfaceOp` replaces exactly
   * one earlier result of the same call (same call id, turn and step) is accepted anywhere,
   * outside its step too (compaction uses it to swap an old output for a placeholder).
   */
  'tool/result': {
    turn: number
    step: number
    message: ToolResultMessage
    errorCode?: string
    storedAside?: { path: string; chars: number }
  }

  /**
   * Marks the end of history copied from a parent session by a fork: events before it
   * were inherited, events after it are this session's own work.
   */
  'session/end-seed': { parentSession: SessionId; parentSeq: SessionSeq }
}

const turnNumber = z.number().int().positive()
const errorRecordSchema = z.strictObject({ code: z.string().min(1), message: z.string() })

registerEvents('@keel/session', {
  'turn/start': z.strictObject({ turn: turnNumber }),
  'turn/end': z.strictObject({
    turn: turnNumber,
    reason: z.enum(['completed', 'aborted', 'error', 'max-steps', 'rejected', 'interrupted']),
    error: errorRecordSchema.optional(),
  }),
  'step/start': z.strictObject({ turn: turnNumber, step: turnNumber }),
  'step/end': z.strictObject({ turn: turnNumber, step: turnNumber }),
  'user/message': z.strictObject({ message: userMessageSchema, source: z.string().min(1).optional() }),
  'assistant/message': z.strictObject({
    turn: turnNumber,
    step: turnNumber,
    message: assistantMessageSchema,
    stream: streamRecordSchema,
    usage: tokenUsageSchema.optional(),
    interrupted: z.literal(true).optional(),
  }),
  'assistant/attempt': z.strictObject({
    turn: turnNumber,
    step: turnNumber,
    attempt: turnNumber,
    stream: streamRecordSchema,
    error: errorRecordSchema,
  }),
  'system/message': z.strictObject({ message: systemMessageSchema }),
  'developer/message': z.strictObject({
    message: developerMessageSchema,
    source: z.string().min(1).optional(),
  }),
  'tool/call': z.strictObject({
    turn: turnNumber,
    step: turnNumber,
    callId: toolCallIdSchema,
    name: z.string().min(1),
    arguments: z.string(),
  }),
  'tool/result': z.strictObject({
    turn: turnNumber,
    step: turnNumber,
    message: toolResultMessageSchema,
    errorCode: z.string().min(1).optional(),
    storedAside: z
      .strictObject({ path: z.string().min(1), chars: z.number().int().nonnegative() })
      .optional(),
  }),
  'session/end-seed': z.strictObject({ parentSession: sessionIdSchema, parentSeq: sessionSeqSchema }),
})
