import type { DeveloperMessage, ToolCallBlock, UserMessage } from '@keel/llm'
import type { Session } from '@keel/session'
import type { Tool, ToolCallFacts, ToolOutput } from '@keel/tools'
import type { z } from 'zod'

/** A source of "now" (Unix ms) and timers; injectable so tests are exact and fast. */
export interface Clock {
  now(): number
  setTimeout(callback: () => void, ms: number): unknown
  clearTimeout(handle: unknown): void
}

/** Before a step: let it run, or refuse it (the turn then ends with reason `rejected`). */
export type BeforeStepDecision = { action: 'enter' } | { action: 'reject'; reason: string }

/**
 * Before a tool runs: allow it, deny it (the model gets an error result with `errorCode`),
 * or ask the user (the host's answerer decides; without one, ask fails closed as deny).
 */
export type BeforeToolDecision =
  | { action: 'allow' }
  | { action: 'deny'; reason: string; errorCode?: string }
  | { action: 'ask'; reason: string }

/** After a tool ran: accept its output, or block it (the model gets `reason` instead). */
export type AfterToolDecision = { action: 'accept' } | { action: 'block'; reason: string }

/** When the model stopped asking for tools: end the turn, or continue with one more user-side message. */
export type TurnStoppingDecision = { action: 'stop' } | { action: 'continue'; message: string }

/** What an interceptor sees before a step. */
export interface BeforeStepInfo {
  readonly turn: number
  readonly step: number
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
}

/** The typed interception points. Handlers run in plugin order; the first non-default decision wins. */
export interface Interceptors {
  beforeStep?(info: BeforeStepInfo): BeforeStepDecision | Promise<BeforeStepDecision>
  beforeTool?(info: ToolCallInfo): BeforeToolDecision | Promise<BeforeToolDecision>
  afterTool?(
    info: ToolCallInfo & { readonly output: ToolOutput },
  ): AfterToolDecision | Promise<AfterToolDecision>
  turnStopping?(info: TurnStoppingInfo): TurnStoppingDecision | Promise<TurnStoppingDecision>
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

/** What a plugin's `setup` gets. */
export interface PluginContext<Config> {
  readonly name: string
  readonly config: Config
  readonly session: Session
  readonly cwd: string
  readonly clock: Clock
  registerTool<Input>(tool: Tool<Input>): void
  intercept(interceptors: Interceptors): void
  /** Queues a user message as a new turn (run when the agent is idle). */
  enqueue(message: UserMessage, options?: { source?: string }): void
  /** Adds a developer message before the next step of the current or next turn. */
  inject(message: DeveloperMessage, options?: { source?: string }): void
  /** Shows something to the user through the agent's observers. */
  display(kind: string, text: string): void
}

/** A plugin: a name, a validated config, the events it owns, its tools, and its setup. */
export interface PluginDefinition<Config = unknown> {
  readonly name: string
  /** Validates the plugin's config (presets hold it as plain JSON). */
  readonly config?: z.ZodType<Config>
  /** The event types this plugin owns (declared in its events.ts). */
  readonly events?: readonly string[]
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
