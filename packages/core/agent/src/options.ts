import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { boundIssues } from '@keel/base'
import type { AssistantMessage, DeveloperMessage, LlmAdapter, UserMessage } from '@keel/llm'
import { developerMessageSchema, userMessageSchema } from '@keel/llm'
import {
  type ErrorRecord,
  type Session,
  schemaIssues,
  type ToolFilter,
  type TurnEndReason,
} from '@keel/session'
import type { Tool } from '@keel/tools'
import type { z } from 'zod'
import type { ChildSessions } from './child-sessions.js'
import { AgentError } from './errors.js'
import type { PluginEntry } from './host.js'
import type { AgentObserver } from './observer.js'
import type { ApprovalAnswerer } from './permission.js'
import type { Clock } from './plugin.js'
import { defaultRetryOptions, type RetryOptions, systemClock } from './retry.js'

/**
 * Where the agent reports its own failures that have no caller to reject (an observer that
 * threw, a plugin-queued turn that failed). Default: nowhere — library code never writes to
 * the console; a CLI passes one that prints.
 */
export type AgentLogger = (entry: { readonly code: string; readonly message: string }) => void

/**
 * The part of a store's `SessionHandle` (`@keel/store`) the agent uses: any
 * `SessionHandle` fits. `directory`, when a backend exposes one (JSONL), is where tool
 * outputs over their cap are stored aside.
 */
export interface StoreHandle {
  readonly session: Session
  /** Resolves when every event appended so far is durable. */
  flush(): Promise<void>
  /** Flushes and releases the writer lock. */
  close(): Promise<void>
  readonly directory?: string
}

/** Options of {@link createAgent}. */
export interface AgentOptions {
  /** The model. */
  llm: LlmAdapter
  /**
   * Where the log goes: a store handle (flushed before each model call and at each turn
   * end, closed with the agent) or a bare in-memory session.
   */
  session: StoreHandle | Session
  /** Plugins, set up in order (disposed in reverse on close). */
  plugins?: readonly PluginEntry[]
  /** Tools besides the plugins' (the plugins' come first). */
  tools?: ReadonlyArray<Tool<unknown>>
  /** Working directory for tools. */
  cwd: string
  /**
   * The system prompt of a blank session (appended as its first event). A resumed session
   * keeps the system prompt of its log: a different value here is not applied (observers
   * get an `onNotice` `SYSTEM_PROMPT_KEPT`); change it explicitly with
   * {@link Agent.setSystemPrompt}.
   */
  systemPrompt?: string
  /**
   * Model id; the adapter's default when absent. A plugin providing `model.active` (a
   * model-selection plugin) overrides it step by step.
   */
  model?: string
  /**
   * Context windows per model id, in tokens, over the adapter's capability table (a
   * preset's `contextWindows` lands here). Plugins read the window of the running model
   * through `ctx.model()`.
   */
  contextWindows?: Readonly<Record<string, number>>
  /**
   * Output token cap per model call (`max_tokens`). Default: the model's `maxOutputTokens`
   * from the adapter's capability table, when the adapter has one. Per turn: {@link SendOptions.maxTokens}.
   */
  maxTokens?: number
  /** Steps (model calls) per turn before it ends with `max-steps`. Default 50. */
  maxSteps?: number
  /** Concurrency-safe calls of one step that may run at once. Default 4. */
  maxParallelTools?: number
  /** Retries of retryable model errors. Default {@link defaultRetryOptions}. */
  retry?: Partial<RetryOptions>
  /** Time and timers (backoff waits, stream records of failed attempts). Default: the wall clock. */
  clock?: Clock
  /** Jitter source in [0, 1). Default `Math.random`. */
  random?: () => number
  /** Live callbacks for UIs. */
  observers?: readonly AgentObserver[]
  /** Where failures nobody else can see are reported. Default: dropped. */
  logger?: AgentLogger
  /**
   * Answerers of approval questions (a terminal, a UI, a parent agent), put in the agent's
   * answerer chain: hook answerers plugins registered, then the session rules, then these
   * (before the interactive answerers plugins registered). Without any interactive
   * answerer, an `ask` that no hook or rule settles fails closed (`APPROVAL_UNAVAILABLE`).
   */
  answerers?: readonly ApprovalAnswerer[]
  /**
   * Where tool outputs over their size cap are written. Default: the `directory` of the
   * store handle plus `/tool-outputs` when the handle has one (JSONL), else
   * `<os tmpdir>/keel-tool-outputs/<session id>`.
   */
  toolOutputDir?: string
  /** Result size cap for tools that set none. Default: the tools runtime's. */
  maxResultChars?: number
  /**
   * Tools withheld from the model, by name, over every tool (plugins' and `tools`): with
   * `only`, just those names are offered; names in `except` never are. A name that matches
   * no tool withholds nothing. Default: every tool.
   */
  toolFilter?: ToolFilter
  /**
   * How plugins create child sessions in this agent's store and build agents over them
   * (`PluginContext.sessions`; `@keel/subagents` needs it). `createPresetAgent` provides
   * it when given a store.
   */
  sessions?: ChildSessions
}

/** Options of one {@link Agent.send}. */
export interface SendOptions {
  /** Recorded as `user/message.source` (e.g. `schedule/<id>`) when the text was not typed by a person. */
  source?: string
  /** Aborts this turn (before it starts, it then starts and ends at once as `aborted`). */
  signal?: AbortSignal
  /** Output token cap for this turn's model calls, overriding the agent's. */
  maxTokens?: number
  /**
   * The message waits in the session's inbox (`agent/inbox/spliced`): the turn takes it out
   * when it starts, in the same breath as its `turn/start`, so it is never lost between.
   */
  fromInbox?: boolean
}

/** How a turn ended. */
export interface TurnResult {
  readonly turn: number
  readonly reason: TurnEndReason
  readonly error?: ErrorRecord
  /** The last assistant message committed in the turn, if any (interrupted ones included). */
  readonly message?: AssistantMessage
  /** Its text blocks, concatenated (empty when there is no message). */
  readonly text: string
}

/** The options after validation and defaults. */
export interface ResolvedOptions {
  readonly cwd: string
  readonly clock: Clock
  readonly random: () => number
  readonly model: string | undefined
  readonly maxTokens: number | undefined
  readonly contextWindows: Readonly<Record<string, number>>
  readonly maxSteps: number
  readonly maxParallel: number
  readonly retry: RetryOptions
  readonly toolOutputDir: string
  readonly maxResultChars: number | undefined
  readonly answerers: readonly ApprovalAnswerer[]
}

/** Whether `filter` lets a tool of this name through (every one without a filter). */
export function toolAllowed(filter: ToolFilter | undefined): (name: string) => boolean {
  if (!filter) return () => true
  const only = filter.only ? new Set(filter.only) : undefined
  const except = new Set(filter.except ?? [])
  return (name) => (only === undefined || only.has(name)) && !except.has(name)
}

export function isHandle(value: StoreHandle | Session): value is StoreHandle {
  return typeof (value as StoreHandle).flush === 'function' && 'session' in value
}

/** Validates the numeric options and applies defaults; throws `AGENT_OPTIONS_INVALID`. */
export function resolveOptions(options: AgentOptions, session: Session, directory?: string): ResolvedOptions {
  const retry = { ...defaultRetryOptions, ...options.retry }
  const resolvedRetry: RetryOptions = {
    maxRetries: nonNegative('retry.maxRetries', retry.maxRetries),
    baseDelayMs: nonNegative('retry.baseDelayMs', retry.baseDelayMs),
    maxDelayMs: nonNegative('retry.maxDelayMs', retry.maxDelayMs),
    maxRetryAfterMs: nonNegative('retry.maxRetryAfterMs', retry.maxRetryAfterMs),
  }
  if (!Number.isInteger(resolvedRetry.maxRetries)) {
    throw new AgentError(
      'AGENT_OPTIONS_INVALID',
      `retry.maxRetries must be an integer, got ${retry.maxRetries}`,
      {
        option: 'retry.maxRetries',
      },
    )
  }
  if (options.maxResultChars !== undefined) positiveInteger('maxResultChars', options.maxResultChars)
  if (options.maxTokens !== undefined) positiveInteger('maxTokens', options.maxTokens)
  for (const [model, window] of Object.entries(options.contextWindows ?? {})) {
    positiveInteger(`contextWindows[${JSON.stringify(model)}]`, window)
  }
  return {
    cwd: options.cwd,
    clock: options.clock ?? systemClock,
    random: options.random ?? Math.random,
    model: options.model,
    maxTokens: options.maxTokens,
    contextWindows: { ...options.contextWindows },
    maxSteps: positiveInteger('maxSteps', options.maxSteps ?? 50),
    maxParallel: positiveInteger('maxParallelTools', options.maxParallelTools ?? 4),
    retry: resolvedRetry,
    toolOutputDir:
      options.toolOutputDir ??
      (typeof directory === 'string'
        ? join(directory, 'tool-outputs')
        : join(tmpdir(), 'keel-tool-outputs', session.id)),
    maxResultChars: options.maxResultChars,
    answerers: options.answerers ?? [],
  }
}

export function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new AgentError('AGENT_OPTIONS_INVALID', `${name} must be a positive integer, got ${value}`, {
      option: name,
    })
  }
  return value
}

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) {
    throw new AgentError('AGENT_OPTIONS_INVALID', `${name} must be a non-negative number, got ${value}`, {
      option: name,
    })
  }
  return value
}

/**
 * The one validation every user-side message goes through (`send`, plugin `enqueue`, a
 * `turnStopping` continuation). Throws `AGENT_INPUT_INVALID` naming `where`.
 */
export function toUserMessage(input: string | UserMessage, where = 'send'): UserMessage {
  const message: UserMessage =
    typeof input === 'string' ? { role: 'user', content: [{ type: 'text', text: input }] } : input
  return checkedMessage(userMessageSchema, message, `${where}: not a user message`)
}

/** The validation of `inject`'s message (a string is one text block). Throws `AGENT_INPUT_INVALID`. */
export function toDeveloperMessage(input: string | DeveloperMessage): DeveloperMessage {
  const message: DeveloperMessage =
    typeof input === 'string' ? { role: 'developer', content: [{ type: 'text', text: input }] } : input
  return checkedMessage(developerMessageSchema, message, 'inject: not a developer message')
}

/** `message` when `schema` accepts it; else `AGENT_INPUT_INVALID`: `refusal`, then the first issue. */
function checkedMessage<M>(schema: z.ZodType<unknown>, message: M, refusal: string): M {
  const issues = schemaIssues(schema, message)
  if (issues) {
    throw new AgentError('AGENT_INPUT_INVALID', `${refusal}: ${boundIssues(issues).issues[0]!.message}`)
  }
  return message
}
