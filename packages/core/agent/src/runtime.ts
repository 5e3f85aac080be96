import { errorMessage } from '@keel/base'
import type { LlmAdapter, ToolSpec } from '@keel/llm'
import type { Session } from '@keel/session'
import type { ServiceView, ToolRegistry } from '@keel/tools'
import type { PluginHost } from './host.js'
import type { ModelRoute } from './model-route.js'
import type { AgentObserver } from './observer.js'
import type { AgentLogger, ResolvedOptions } from './options.js'
import type { ApprovalAnswerer } from './permission.js'
import type { RequestMemo } from './request-record.js'
import type { ToolBoard } from './tool-sets.js'

/** The observer sink: every live notification goes through it. */
export type Emit = <K extends keyof AgentObserver>(
  method: K,
  arg: Parameters<NonNullable<AgentObserver[K]>>[0],
) => void

/** What the turn runner, model call and tool dispatch share: fixed for the agent's life. */
export interface Runtime {
  readonly session: Session
  readonly llm: LlmAdapter
  readonly host: PluginHost
  /** The running step's tools (fixed within a step; plugins' tool sets are taken in between steps). */
  readonly registry: ToolRegistry
  /** The specs the running step sends. */
  readonly specs: readonly ToolSpec[]
  /** The fixed tools and the plugins' tool sets. */
  readonly board: ToolBoard
  readonly options: ResolvedOptions
  /** The answerer chain's answerers: plugins' hook answerers, the agent's, then plugins' interactive ones. */
  readonly answerers: readonly ApprovalAnswerer[]
  /** The plugins' services (tools get them as `ToolContext.services`). */
  readonly services: ServiceView
  readonly emit: Emit
  readonly log: AgentLogger
  /** Makes every appended event durable (a no-op for a bare session). */
  flush(): Promise<void>
  /** Appends the queued developer messages (plugin injections, added context). */
  drainInjections(): void
  /** The route of the next model request (the `model.active` choice, the options, the adapter). */
  route(turnMaxTokens?: number): ModelRoute
  /** What the latest request's facts were compared with in the log (`recordRequest`). */
  readonly requests: RequestMemo
}

/** The state of one running turn. */
export interface TurnState {
  readonly turn: number
  readonly signal: AbortSignal
  /** Tool call ids used in the turn (a reused id gets a suffix). */
  readonly usedCallIds: Set<string>
  /** `max_tokens` this turn asked for (`SendOptions.maxTokens`), overriding the agent's and the model's. */
  readonly maxTokens: number | undefined
  /** The route of the step whose model call runs now (resolved at the start of each call). */
  route?: ModelRoute
  /** How often each call of the turn was asked about (a rewritten call is asked again). */
  readonly asked: Map<string, number>
}

/** Builds the observer sink: a throwing observer is reported to `log`, never raised. */
export function createEmit(observers: readonly AgentObserver[], log: AgentLogger): Emit {
  return (method, arg) => {
    for (const observer of observers) {
      const fn = observer[method] as ((value: typeof arg) => void) | undefined
      if (!fn) continue
      try {
        fn.call(observer, arg)
      } catch (error) {
        log({
          code: 'OBSERVER_FAILED',
          message: `observer ${method} threw: ${errorMessage(error)}`,
        })
      }
    }
  }
}
