import { errorMessage } from '@keel/base'
import { getEventRegistration } from '@keel/session'
import type { Tool, ToolOutput } from '@keel/tools'
import { CommandRegistry, type CommandSummary, type RegisteredCommand } from './commands.js'
import { AgentError } from './errors.js'
import {
  type BeforeToolVerdict,
  type Decided,
  type Registered,
  type Reinput,
  type Report,
  runAfterTool,
  runBeforeCompaction,
  runBeforeStep,
  runBeforeTool,
  runModelError,
  runPromptSubmit,
  runSessionEnd,
  runSessionStart,
  runTurnStopping,
} from './interceptors-run.js'
import type { ApprovalAnswerer } from './permission.js'
import type {
  AddedContext,
  AfterToolDecision,
  BeforeCompactionDecision,
  BeforeCompactionInfo,
  BeforeStepDecision,
  BeforeStepInfo,
  ModelErrorDecision,
  ModelErrorInfo,
  PluginDefinition,
  PromptSubmitInfo,
  SessionEndInfo,
  SessionStartInfo,
  ToolCallInfo,
  TurnStoppingDecision,
  TurnStoppingInfo,
} from './plugin.js'
import { type AgentFacilities, createPluginContext } from './plugin-context.js'
import { type PluginEntry, resolveEntry, validateConfig } from './plugin-use.js'
import { orderByServices, ServiceRegistry } from './services.js'

export type { BeforeToolVerdict, Decided, Reinput } from './interceptors-run.js'
export type { AgentFacilities } from './plugin-context.js'
export { type PluginEntry, type PluginUse, usePlugin } from './plugin-use.js'
export type { CommandSummary, RegisteredCommand }

interface Disposer {
  readonly plugin: string
  readonly dispose: () => void | Promise<void>
}

const pluginNamePattern = /^[a-z0-9@][a-z0-9@/._-]{0,127}$/i

/**
 * Runs plugins for one agent: validates each config with the plugin's zod schema and the
 * service declarations of all of them (every required service has a provider, no key has
 * two, no cycle) before any setup runs; sets the plugins up in an order where every
 * provider comes before its users (the given order otherwise); collects their tools,
 * commands, answerers, services and interceptors; runs interceptors in setup order (see
 * `interceptors-run.ts` for how votes combine and how a throwing interceptor fails closed);
 * and disposes in reverse order on close.
 */
export class PluginHost {
  readonly #tools: Array<Tool<unknown>> = []
  readonly #interceptors: Registered[] = []
  readonly #disposers: Disposer[] = []
  readonly #names: string[] = []
  readonly #commands = new CommandRegistry()
  readonly #answerers: ApprovalAnswerer[] = []
  readonly #services = new ServiceRegistry()
  #report: Report = () => {}
  #closed = false

  private constructor() {}

  /** The plugins' names, in setup order. */
  get plugins(): readonly string[] {
    return this.#names
  }

  /** Tools contributed by plugins (their `tools` first, then those registered in `setup`), in setup order. */
  get tools(): ReadonlyArray<Tool<unknown>> {
    return this.#tools
  }

  /** The answerers plugins registered, in registration order. */
  get answerers(): readonly ApprovalAnswerer[] {
    return this.#answerers
  }

  /** The services plugins provided. */
  get services(): ServiceRegistry {
    return this.#services
  }

  /**
   * Validates every config and the plugins' service declarations, then sets the plugins
   * up in service order. If a setup throws, the plugins already set up are disposed (in
   * reverse) and {@link AgentError} `PLUGIN_SETUP_FAILED` names the plugin that failed.
   */
  static async start(entries: readonly PluginEntry[], services: AgentFacilities): Promise<PluginHost> {
    const host = new PluginHost()
    host.#report = services.report
    const resolved = entries.map((entry) => resolveEntry(entry))
    const seen = new Set<string>()
    // Validate everything before running any setup: a bad config or a missing service costs no side effects.
    const configs = resolved.map(({ plugin, config }) => {
      checkDefinition(plugin, seen)
      return validateConfig(plugin, config)
    })
    const order = orderByServices(resolved.map(({ plugin }) => plugin))
    for (const i of order) {
      const plugin = resolved[i]!.plugin
      try {
        await host.#setup(plugin, configs[i], services)
      } catch (error) {
        const disposeErrors = await host.#disposeAll()
        if (error instanceof AgentError && error.code !== 'PLUGIN_SETUP_FAILED') throw error
        throw new AgentError(
          'PLUGIN_SETUP_FAILED',
          `plugin '${plugin.name}' failed to set up: ${errorMessage(error)}${
            disposeErrors.length > 0
              ? ` (and ${disposeErrors.length} disposer(s) of earlier plugins failed)`
              : ''
          }`,
          { plugin: plugin.name },
          { cause: error },
        )
      }
    }
    return host
  }

  async #setup(plugin: PluginDefinition<unknown>, config: unknown, services: AgentFacilities): Promise<void> {
    const name = plugin.name
    this.#names.push(name)
    for (const tool of plugin.tools ?? []) this.#tools.push(tool)
    const setup = createPluginContext(plugin, config, services, {
      tools: this.#tools,
      commands: this.#commands,
      interceptors: this.#interceptors,
      answerers: this.#answerers,
      services: this.#services,
      view: {
        beforeCompaction: (info) => this.beforeCompaction(info),
        sessionStart: async (info) => {
          const added = await this.sessionStart({ source: info.source })
          for (const { plugin: by, text } of added) {
            services.inject(
              { role: 'developer', content: [{ type: 'text', text }] },
              { source: `plugin/${by}` },
            )
          }
          return added
        },
      },
      closed: () => this.#closed,
    })
    let dispose: unknown
    try {
      dispose = await plugin.setup?.(setup.context)
    } catch (error) {
      setup.done(false)
      throw error
    }
    if (typeof dispose === 'function') this.#disposers.push({ plugin: name, dispose: dispose as () => void })
    setup.done(true)
  }

  /** The commands plugins registered, in registration order. */
  get commands(): CommandSummary[] {
    return this.#commands.list()
  }

  /** The command named `name`; `COMMAND_UNKNOWN` when no plugin registered it. */
  command(name: string): RegisteredCommand {
    return this.#commands.get(name)
  }

  /** Before a step: the first `reject` wins. */
  beforeStep(info: BeforeStepInfo): Promise<Decided<BeforeStepDecision>> {
    return runBeforeStep(this.#interceptors, info)
  }

  /**
   * Before a tool runs: every plugin votes, `deny` over `ask` over `allow`; a rewrite
   * (`input` on a vote) that `reinput` accepts restarts the vote with the new call (see
   * `runBeforeTool`).
   */
  beforeTool(info: ToolCallInfo, reinput: Reinput = () => undefined): Promise<BeforeToolVerdict> {
    return runBeforeTool(this.#interceptors, info, reinput)
  }

  /** After a tool ran: the first `block` wins. */
  afterTool(info: ToolCallInfo & { readonly output: ToolOutput }): Promise<Decided<AfterToolDecision>> {
    return runAfterTool(this.#interceptors, info)
  }

  /** When the model stopped asking for tools: the first `continue` wins. */
  turnStopping(info: TurnStoppingInfo): Promise<Decided<TurnStoppingDecision>> {
    return runTurnStopping(this.#interceptors, info, this.#report)
  }

  /** When the agent is created on its session, or (`compact`) after a compaction: the context every plugin adds. */
  sessionStart(info: SessionStartInfo): Promise<AddedContext[]> {
    return runSessionStart(this.#interceptors, info, this.#report)
  }

  /** Before a user message starts a turn: the first `block` wins; accepting plugins' context is collected. */
  promptSubmit(
    info: PromptSubmitInfo,
  ): Promise<{ blocked?: Decided<{ action: 'block'; reason: string }>; context: AddedContext[] }> {
    return runPromptSubmit(this.#interceptors, info)
  }

  /** On close, before disposing: every handler runs. */
  sessionEnd(info: SessionEndInfo): Promise<void> {
    return runSessionEnd(this.#interceptors, info, this.#report)
  }

  /**
   * For the compaction plugin to call before it compacts: the first `cancel` wins, and
   * `instructions` pass from plugin to plugin. The agent itself never compacts.
   */
  beforeCompaction(info: BeforeCompactionInfo): Promise<Decided<BeforeCompactionDecision>> {
    return runBeforeCompaction(this.#interceptors, info)
  }

  /** After a final model failure: the first `retry` wins. */
  modelError(info: ModelErrorInfo): Promise<Decided<ModelErrorDecision>> {
    return runModelError(this.#interceptors, info, this.#report)
  }

  /**
   * Runs every disposer in reverse setup order, even when some throw; then forgets the
   * services and throws `PLUGIN_DISPOSE_FAILED` naming the plugins whose disposers failed.
   * Idempotent.
   */
  async close(): Promise<void> {
    if (this.#closed) return
    const errors = await this.#disposeAll()
    this.#closed = true
    this.#services.clear()
    if (errors.length > 0) {
      throw new AgentError(
        'PLUGIN_DISPOSE_FAILED',
        `disposing plugin(s) ${errors.map((e) => `'${e.plugin}'`).join(', ')} failed: ${errors
          .map((e) => errorMessage(e.error))
          .join('; ')}`,
        { plugins: errors.map((e) => e.plugin) },
        { cause: errors[0]!.error },
      )
    }
  }

  async #disposeAll(): Promise<Array<{ plugin: string; error: unknown }>> {
    const errors: Array<{ plugin: string; error: unknown }> = []
    while (this.#disposers.length > 0) {
      const { plugin, dispose } = this.#disposers.pop()!
      try {
        await dispose()
      } catch (error) {
        errors.push({ plugin, error })
      }
    }
    return errors
  }
}

/** A plugin's name is well-formed and unique, and every event it owns is registered. */
function checkDefinition(plugin: PluginDefinition<unknown>, seen: Set<string>): void {
  if (!pluginNamePattern.test(plugin.name)) {
    throw new AgentError('PLUGIN_CONFIG_INVALID', `plugin name ${JSON.stringify(plugin.name)} is invalid`, {
      plugin: plugin.name,
    })
  }
  if (seen.has(plugin.name)) {
    throw new AgentError(
      'PLUGIN_NAME_DUPLICATE',
      `plugin '${plugin.name}' is listed twice; give each plugin once (with one config)`,
      { plugin: plugin.name },
    )
  }
  seen.add(plugin.name)
  for (const type of plugin.events ?? []) {
    if (!getEventRegistration(type)) {
      throw new AgentError(
        'PLUGIN_EVENTS_UNREGISTERED',
        `plugin '${plugin.name}' owns event '${type}' but no loaded module registered it; import the plugin's events.ts (registerEvents) before starting the agent`,
        { plugin: plugin.name, type },
      )
    }
  }
}
