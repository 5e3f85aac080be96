import type { DeveloperMessage, LlmAdapter, LlmError, ToolCallBlock, ToolSpec, UserMessage } from '@keel/llm'
import type { Session } from '@keel/session'
import type { ServiceKey, ServiceMap, ServiceView, Tool, ToolCallFacts, ToolOutput } from '@keel/tools'
import type { z } from 'zod'
import type { ChildSessions } from './child-sessions.js'
import type { SessionRule } from './events.js'
import type { ModelInfo, ModelRoute } from './model-route.js'
import type { ApprovalAnswerer } from './permission.js'
import type { ToolSet } from './tool-sets.js'

/** A source of "now" (Unix ms) and timers; injectable so tests are exact and fast. */
export interface Clock {
  now(): number
  setTimeout(callback: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

/** Before a step: let it run, or refuse it (the turn then ends with reason `rejected`). */
export type BeforeStepDecision = { action: 'enter' } | { action: 'reject'; reason: string }

/**
 * Before a tool runs, each plugin votes: allow it, deny it (the model gets an error result
 * with `errorCode`), or ask. Every plugin votes on every call; a `deny` wins over an `ask`,
 * an `ask` over an `allow`. An `ask` goes to the agent's answerer chain (hook answerers,
 * session rules, interactive answerers, else fail closed: `APPROVAL_UNAVAILABLE`); its
 * `rule` is what an "allow for this session" answer records (default: the tool, with the
 * exact command line for shell calls).
 *
 * `allow` and `ask` may carry a replacement `input` (a rewrite of the call). The agent
 * validates it with the tool's schema (`TOOL_INPUT_REWRITE_INVALID` if it does not pass),
 * recomputes the call's facts, logs a `tool/input-rewritten` event, and runs the whole
 * `beforeTool` chain again from the first plugin with the new input and facts, so every
 * verdict that counts was made about the input that runs. A rewriting plugin is asked
 * again too and should then return the input unchanged (an `input` equal to the current
 * one is no rewrite). After {@link MAX_INPUT_REWRITES} rewrites of one call it is denied
 * (`TOOL_INPUT_REWRITE_LOOP`). The original `tool/call` stays as the model sent it.
 */
export type BeforeToolDecision =
  | { action: 'allow'; input?: unknown }
  | { action: 'deny'; reason: string; errorCode?: string }
  | { action: 'ask'; reason: string; input?: unknown; rule?: SessionRule }

/** How many times the `beforeTool` chain may rewrite one call's input before the call is denied. */
export const MAX_INPUT_REWRITES = 3

/** After a tool ran: accept its output, or block it (the model gets `reason` instead). */
export type AfterToolDecision = { action: 'accept' } | { action: 'block'; reason: string }

/** When the model stopped asking for tools: end the turn, or continue with one more user-side message. */
export type TurnStoppingDecision = { action: 'stop' } | { action: 'continue'; message: string }

/** What an interceptor sees before a step. */
export interface BeforeStepInfo {
  readonly turn: number
  readonly step: number
  /**
   * Aborted when the turn is cancelled (Ctrl-C, `agent.abort()`): work done before the
   * step (a compaction's summary call) stops then.
   */
  readonly signal?: AbortSignal
}

/** What an interceptor sees before and after a tool call. */
export interface ToolCallInfo {
  readonly turn: number
  readonly step: number
  readonly call: ToolCallBlock
  readonly tool: Tool<unknown>
  /** The validated input. */
  readonly input: unknown
  readonly facts: ToolCallFacts
  /** Aborted when the turn is cancelled (an interceptor waiting on a person stops then). */
  readonly signal?: AbortSignal
}

/** What an interceptor sees when a turn is about to stop. */
export interface TurnStoppingInfo {
  readonly turn: number
  readonly step: number
  /** Aborted when the turn is cancelled (a long-running interceptor stops then). */
  readonly signal?: AbortSignal
}

/** Why the agent was created on its session: a blank log, an existing history, or after a compaction. */
export interface SessionStartInfo {
  readonly source: 'startup' | 'resume' | 'compact'
}

/** Session start: carry on, optionally adding context (a developer message before the next turn). */
export type SessionStartDecision = { action: 'continue'; context?: string }

/** Context a plugin added (session start, prompt submit), with the plugin that added it. */
export interface AddedContext {
  readonly plugin: string
  readonly text: string
}

/** What an interceptor sees before a user message starts a turn. */
export interface PromptSubmitInfo {
  /** The turn the message would start. */
  readonly turn: number
  readonly message: UserMessage
  /** Aborted when the turn is cancelled (a long-running interceptor stops then). */
  readonly signal?: AbortSignal
}

/**
 * Before a user message starts a turn: accept it (optionally adding context as a developer
 * message after it), or block it — the message is not logged nor sent to the model and the
 * turn ends at once with reason `rejected` (`PROMPT_BLOCKED`).
 */
export type PromptSubmitDecision =
  | { action: 'accept'; context?: string }
  | { action: 'block'; reason: string }

/** Why the agent is closing. `error` when a turn failed because the log could not be written. */
export interface SessionEndInfo {
  readonly reason: 'close' | 'error'
}

/** What a compaction is about to do (asked by the compaction plugin through `trigger.beforeCompaction`). */
export interface BeforeCompactionInfo {
  readonly trigger: 'auto' | 'manual' | 'overflow'
  /** Extra summary instructions, if any. */
  readonly instructions?: string
}

/** Before a compaction: proceed (optionally with replaced instructions) or cancel it. */
export type BeforeCompactionDecision =
  | { action: 'proceed'; instructions?: string }
  | { action: 'cancel'; reason: string }

/** A model call that failed for good (after the retries), before the turn ends with `error`. */
export interface ModelErrorInfo {
  readonly turn: number
  readonly step: number
  readonly error: LlmError
  /** Aborted when the turn is cancelled: recovery work (an overflow compaction) stops then. */
  readonly signal?: AbortSignal
}

/** After a final model failure: let the turn fail, or re-run the step's model call once more. */
export type ModelErrorDecision = { action: 'fail' } | { action: 'retry' }

/** What a running command gets besides its argument text. */
export interface CommandRunInfo {
  /** Aborted when the person cancels the command (Ctrl-C) or the agent closes: stop then. */
  readonly signal: AbortSignal
  /** Who ran it (`user`, `plugin/<name>`), as logged in `command/run`. */
  readonly source: string
}

/**
 * A slash command a plugin offers (a UI shows it as `/<name> <args>`). Each run is logged
 * as `command/run` and one `command/done`.
 */
export interface PluginCommand {
  /** One line for the command list. */
  readonly description: string
  /** The arguments, for help (`[strict|on_request|never]`). */
  readonly usage?: string
  /** Runs the command; the returned text, if any, is shown to the user. */
  // biome-ignore lint/suspicious/noConfusingVoidType: lets `async run() { … }` return nothing
  run(args: string, info: CommandRunInfo): Promise<string | void>
}

/**
 * What a plugin may ask of the plugin host (a compaction plugin uses both):
 * - `beforeCompaction(info)` runs every plugin's `beforeCompaction` interceptors before it
 *   compacts (the first `cancel` wins, with the plugin that cancelled; `instructions` pass
 *   from plugin to plugin).
 * - `sessionStart({ source: 'compact' })`, called after a compaction replaced the history,
 *   runs every plugin's `sessionStart` interceptors again with source `compact`; the context
 *   they add is queued as developer messages before the next step (of the running turn, or
 *   of the next turn) and returned. Throws `PLUGIN_CONTEXT_CLOSED` after the agent closed.
 */
export interface PluginTriggers {
  beforeCompaction(
    info: BeforeCompactionInfo,
  ): Promise<{ readonly decision: BeforeCompactionDecision; readonly plugin?: string }>
  sessionStart(info: { readonly source: 'compact' }): Promise<readonly AddedContext[]>
}

/** The typed interception points. Handlers run in plugin order; the first non-default decision wins. */
export interface Interceptors {
  beforeStep?(info: BeforeStepInfo): BeforeStepDecision | Promise<BeforeStepDecision>
  beforeTool?(info: ToolCallInfo): BeforeToolDecision | Promise<BeforeToolDecision>
  afterTool?(
    info: ToolCallInfo & { readonly output: ToolOutput },
  ): AfterToolDecision | Promise<AfterToolDecision>
  turnStopping?(info: TurnStoppingInfo): TurnStoppingDecision | Promise<TurnStoppingDecision>
  /**
   * When the agent is created on its session (`startup` / `resume`), and again with
   * `compact` when a plugin reports a compaction through `trigger.sessionStart`; every
   * plugin's `context` is added.
   */
  sessionStart?(info: SessionStartInfo): SessionStartDecision | Promise<SessionStartDecision>
  /** Before a user message starts a turn: the first `block` wins; every accepting plugin's `context` is added. */
  promptSubmit?(info: PromptSubmitInfo): PromptSubmitDecision | Promise<PromptSubmitDecision>
  /** On `agent.close()`, before the plugins are disposed. Every handler runs; throws are reported, not raised. */
  sessionEnd?(info: SessionEndInfo): void | Promise<void>
  /** Before a compaction: the first `cancel` wins; `instructions` pass from plugin to plugin. */
  beforeCompaction?(info: BeforeCompactionInfo): BeforeCompactionDecision | Promise<BeforeCompactionDecision>
  /** After a model call failed for good: the first `retry` wins (the step's model call runs once more). */
  modelError?(info: ModelErrorInfo): ModelErrorDecision | Promise<ModelErrorDecision>
}

/** Something a plugin wants shown to the user (not persisted; e.g. the todo list after a change). */
export interface DisplayNotice {
  /** The plugin's name. */
  readonly source: string
  /** A short kind the UI may style (`todo-list`, `schedule-fired`, …). */
  readonly kind: string
  /** Plain text, ready to print. */
  readonly text: string
}

/**
 * How the agent retries a failed model call (its `retry` options and jitter), for a plugin
 * that calls the model itself and should retry the same way.
 */
export interface ModelRetryPolicy {
  /** Retries after the first attempt. */
  readonly maxRetries: number
  /** The wait before retry number `failures` (from 1), never shorter than `retryAfterMs` up to the agent's cap. */
  delay(failures: number, retryAfterMs?: number): number
}

/** What a plugin's `setup` gets. */
export interface PluginContext<Config> {
  readonly name: string
  readonly config: Config
  readonly session: Session
  readonly cwd: string
  readonly clock: Clock
  /** The agent's model adapter, for plugins that call the model themselves (e.g. a summary). */
  readonly llm: LlmAdapter
  /**
   * The route of the agent's next model request: provider, endpoint, the model id (a
   * model-selection plugin's `model.active` choice, else the agent's `model` option, else
   * the adapter's default), its context window (the choice's, else the agent's
   * `contextWindows` entry, else the adapter's capability table), its output budget
   * `maxTokens` (the running turn's, else the agent's, else the model's `maxOutputTokens`)
   * and reasoning effort. Call it when needed: it changes when the model is switched.
   */
  model(): ModelRoute
  /** What the agent knows about another model id (window, output limit, reasoning effort levels). */
  modelInfo(model: string): ModelInfo
  /**
   * The tool specs the agent's requests carry, in order (empty until every plugin is set
   * up): a plugin that calls the model with the same prefix as the agent sends them too.
   */
  toolSpecs(): readonly ToolSpec[]
  /** How the agent retries model calls. */
  readonly modelRetry: ModelRetryPolicy
  /**
   * Interception points a plugin may set off in the other plugins:
   * `trigger.beforeCompaction(info)` before a compaction, `trigger.sessionStart({ source:
   * 'compact' })` after it.
   */
  readonly trigger: PluginTriggers
  registerTool<Input>(tool: Tool<Input>): void
  /**
   * The plugin's {@link ToolSet}: tools it may replace while the agent runs (the tools of
   * MCP servers that come, go and change). The model is offered the set's tools from the
   * next step on; each change of what it is offered is logged as `tool/list-changed`, and a
   * tool that went or changed is told to the model. One set per plugin (a second call
   * returns the same set). Only during setup; `replace` any time until the agent closes.
   */
  registerToolSet(): ToolSet
  /**
   * Registers a slash command (`name`: lower-case letters, digits and `-`, unique per
   * agent), run through `agent.runCommand(name, args)` and logged as `command/run` /
   * `command/done`. Only during setup.
   */
  registerCommand(name: string, command: PluginCommand): void
  intercept(interceptors: Interceptors): void
  /**
   * Adds an answerer to the agent's answerer chain (`hook` answerers are consulted before
   * the session rules, `interactive` ones after them). Only during setup.
   */
  registerAnswerer(answerer: ApprovalAnswerer): void
  /** Provides a service under a key the plugin lists in `provides`. Only during setup. */
  provide<K extends ServiceKey>(key: K, service: ServiceMap[K]): void
  /**
   * The service under a key the plugin lists in `requires` (its provider was set up
   * first). Throws `PLUGIN_SERVICE_UNDECLARED` for a key it does not list.
   */
  use<K extends ServiceKey>(key: K): ServiceMap[K]
  /**
   * The service under a key the plugin lists in `optional` (or `requires`), or undefined
   * when no plugin of this agent provides it.
   */
  useOptional<K extends ServiceKey>(key: K): ServiceMap[K] | undefined
  /** Every service of the agent, read-only (what tools see as `ToolContext.services`). */
  readonly services: ServiceView
  /**
   * The agent's tools, once every plugin is set up (empty during setup): a plugin that
   * reads the log of tool calls judges them by the tool's annotations and facts.
   */
  tools(): ReadonlyArray<Tool<unknown>>
  /**
   * The agent's answerer chain (hook answerers, the agent's `answerers`, plugins'
   * interactive ones), once every plugin is set up (empty during setup): a plugin running a
   * child agent puts the child's questions to it (see `settle`).
   */
  answerers(): readonly ApprovalAnswerer[]
  /**
   * Child sessions and agents in this agent's store, when the embedding program lent them
   * (`AgentOptions.sessions`); undefined otherwise.
   */
  readonly sessions: ChildSessions | undefined
  /**
   * Queues a user message as a new turn (run when the agent is idle). Throws `AGENT_CLOSED`
   * once `agent.close()` began: the message was not queued.
   */
  enqueue(message: UserMessage, options?: { source?: string }): void
  /** Adds a developer message before the next step of the current or next turn. */
  inject(message: DeveloperMessage, options?: { source?: string }): void
  /** Shows something to the user through the agent's observers. */
  display(kind: string, text: string): void
  /**
   * Makes every event appended so far durable now, rather than at the loop's next
   * durability point (before a model call, once a step's tool calls are logged, at the turn end):
   * for what a plugin appends during a long tool run that a crash must not lose, such as a
   * child session's start. Resolves at once without a store.
   */
  flush(): Promise<void>
}

/**
 * A plugin: a name, a validated config, the events it owns, the services it provides and
 * needs, its tools, and its setup.
 */
export interface PluginDefinition<Config = unknown> {
  readonly name: string
  /** Validates the plugin's config (presets hold it as plain JSON). */
  readonly config?: z.ZodType<Config>
  /** The event types this plugin owns (declared in its events.ts). */
  readonly events?: readonly string[]
  /** Service keys this plugin's setup provides (`ctx.provide`); one provider per key per agent. */
  readonly provides?: readonly ServiceKey[]
  /**
   * Service keys this plugin needs (`ctx.use`): their providers are set up first, and an
   * agent without one is refused before any setup runs (`PLUGIN_SERVICE_MISSING`).
   */
  readonly requires?: readonly ServiceKey[]
  /** Service keys this plugin uses when present (`ctx.useOptional`); their providers are set up first. */
  readonly optional?: readonly ServiceKey[]
  /** Tools registered for every agent using the plugin. */
  readonly tools?: ReadonlyArray<Tool<unknown>>
  /** Registers tools, interceptors and services; returns a disposer run when the agent closes. */
  setup?(
    context: PluginContext<Config>,
  ): void | (() => void | Promise<void>) | Promise<void | (() => void | Promise<void>)>
}

/** Identity helper that infers the config type. */
export function definePlugin<Config>(definition: PluginDefinition<Config>): PluginDefinition<Config> {
  return definition
}
