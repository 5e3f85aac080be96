import { type DeveloperMessage, type LlmAdapter, LlmError, type UserMessage } from '@keel/llm'
import type { Session } from '@keel/session'
import type { ServiceKey, Tool } from '@keel/tools'
import type { ChildSessions } from './child-sessions.js'
import { CommandRegistry } from './commands.js'
import { modelFacilities } from './model-route.js'
import type { ApprovalAnswerer, ApprovalQuestion } from './permission.js'
import type {
  Clock,
  DisplayNotice,
  Interceptors,
  PluginContext,
  PluginDefinition,
  PluginTriggers,
} from './plugin.js'
import { createPluginContext } from './plugin-context.js'
import { defaultRetryOptions } from './retry.js'
import { ServiceRegistry } from './services.js'
import { ToolBoard } from './tool-sets.js'

/**
 * A {@link Clock} for tests (`@keel/agent/testing`): time moves only when told, and timers
 * that come due run in order as it moves, so plugins with timers (`@keel/schedule`) are
 * tested exactly and fast, with no real waiting.
 */
export class ManualClock implements Clock {
  #now: number
  #next = 1
  readonly #timers = new Map<number, { at: number; callback: () => void }>()
  /** Every delay a timer was requested with, in order. */
  readonly requested: number[] = []

  /** Starts at `now` (Unix ms); default Monday 5 January 2026, 08:00 UTC. */
  constructor(now = Date.UTC(2026, 0, 5, 8, 0, 0)) {
    this.#now = now
  }

  now(): number {
    return this.#now
  }

  setTimeout(callback: () => void, ms: number): unknown {
    this.requested.push(ms)
    const id = this.#next++
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), callback })
    return id
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number)
  }

  /**
   * Moves time forward by `ms`, running every timer that comes due, earliest first, and
   * letting the promise work each one starts finish before the clock moves on, as it
   * would in real time.
   */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms
    for (;;) {
      let first: [number, { at: number; callback: () => void }] | undefined
      for (const entry of this.#timers) if (!first || entry[1].at < first[1].at) first = entry
      if (!first || first[1].at > target) break
      this.#timers.delete(first[0])
      this.#now = Math.max(this.#now, first[1].at)
      first[1].callback()
      await new Promise((resolve) => setImmediate(resolve))
    }
    this.#now = target
  }

  /** How many timers are armed. */
  get pending(): number {
    return this.#timers.size
  }
}

/**
 * An {@link LlmAdapter} for plugin tests that build a `PluginContext` by hand and never
 * call the model: any call fails with an `LlmError` (`network`) saying so.
 */
export function offlineLlm(): LlmAdapter {
  return {
    provider: 'offline',
    model: 'offline',
    stream(): AsyncIterable<never> {
      return {
        [Symbol.asyncIterator]: () => ({
          next: () =>
            Promise.reject(new LlmError('network', 'offlineLlm: this test context has no model to call')),
        }),
      }
    },
  }
}

/**
 * A {@link PluginTriggers} for hand-built plugin contexts in tests: `beforeCompaction`
 * proceeds with the instructions it was given (no other plugin is there to object), and
 * `sessionStart` adds no context (no other plugin is there to add any).
 */
export function soloTriggers(): PluginTriggers {
  return {
    beforeCompaction: async (info) => ({
      decision:
        info.instructions === undefined
          ? { action: 'proceed' }
          : { action: 'proceed', instructions: info.instructions },
    }),
    sessionStart: async () => [],
  }
}

/**
 * An interactive {@link ApprovalAnswerer} for tests from a plain function: `allow` is an
 * allow-once, `session` an allow for the session, `deny` a rejection ("declined").
 */
export function answerWith(
  decide: (
    question: ApprovalQuestion,
  ) => 'allow' | 'session' | 'deny' | Promise<'allow' | 'session' | 'deny'>,
  name = 'test-answerer',
): ApprovalAnswerer {
  return {
    name,
    kind: 'interactive',
    async answer(question) {
      const said = await decide(question)
      if (said === 'allow') return { outcome: 'allow-once' }
      if (said === 'session') return { outcome: 'allow-session' }
      return { outcome: 'reject', reason: 'declined' }
    },
  }
}

/** What {@link soloContext} needs: the session, and where the plugin's messages go. */
export interface SoloContextInit {
  readonly session: Session
  readonly cwd?: string
  readonly clock?: Clock
  readonly llm?: LlmAdapter
  /** Context windows per model id, as the agent's `contextWindows` option gives them. */
  readonly contextWindows?: Readonly<Record<string, number>>
  /** Services other plugins would provide, already in place (provided by `test`). */
  readonly services?: ReadonlyArray<readonly [ServiceKey, unknown]>
  /** Child sessions the plugin may create (`PluginContext.sessions`). */
  readonly sessions?: ChildSessions
  enqueue?(message: UserMessage, source?: string): void
  inject?(message: DeveloperMessage, source?: string): void
  display?(notice: DisplayNotice): void
}

/** A plugin's real context outside an agent, and what its setup contributed. */
export interface SoloContext {
  readonly context: PluginContext<unknown>
  readonly tools: Array<Tool<unknown>>
  readonly commands: CommandRegistry
  readonly interceptors: Array<{ readonly plugin: string; readonly interceptors: Interceptors }>
  readonly answerers: ApprovalAnswerer[]
  readonly services: ServiceRegistry
  /** What the plugin's tool set (`registerToolSet`) holds now; empty when it has none. */
  toolSet(): ReadonlyArray<Tool<unknown>>
  /** Ends setup (as the host does after `setup` returns): setup-only methods refuse from then on. */
  done(): void
}

/**
 * The context a plugin's `setup` gets in an agent (the same implementation), for tests
 * that drive one plugin by hand: contributions land in the returned registries,
 * `trigger.beforeCompaction` proceeds and `trigger.sessionStart` adds nothing ({@link soloTriggers}).
 */
export function soloContext(
  plugin: PluginDefinition<unknown>,
  config: unknown,
  init: SoloContextInit,
): SoloContext {
  const services = new ServiceRegistry()
  for (const [key, service] of init.services ?? []) services.provide('test', key, service as never)
  const sink = {
    tools: [] as Array<Tool<unknown>>,
    commands: new CommandRegistry(),
    interceptors: [] as Array<{ readonly plugin: string; readonly interceptors: Interceptors }>,
    answerers: [] as ApprovalAnswerer[],
    services,
    view: soloTriggers(),
    closed: () => false,
  }
  const board = new ToolBoard(() => {})
  const llm = init.llm ?? offlineLlm()
  const { route: _route, ...model } = modelFacilities(
    llm,
    {
      model: undefined,
      maxTokens: undefined,
      contextWindows: init.contextWindows ?? {},
      retry: defaultRetryOptions,
      random: () => 0.5,
    },
    { services: () => services, turnMaxTokens: () => undefined },
  )
  const setup = createPluginContext(
    plugin,
    config,
    {
      session: init.session,
      cwd: init.cwd ?? process.cwd(),
      clock: init.clock ?? new ManualClock(),
      llm,
      ...model,
      toolSpecs: () => [],
      enqueue: (message, options) => init.enqueue?.(message, options?.source),
      inject: (message, options) => init.inject?.(message, options?.source),
      display: (notice) => init.display?.(notice),
      tools: () => sink.tools,
      answerers: () => sink.answerers,
      sessions: init.sessions,
      toolSet: (name) => board.set(name),
      report: () => {},
    },
    sink,
  )
  return {
    ...sink,
    context: setup.context,
    toolSet: () => board.set(plugin.name).current(),
    done: () => setup.done(true),
  }
}
