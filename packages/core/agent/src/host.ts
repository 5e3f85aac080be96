import type { DeveloperMessage, LlmAdapter, UserMessage } from '@keel/llm'
import { getEventRegistration, type Session } from '@keel/session'
import type { Tool, ToolOutput } from '@keel/tools'
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
import type {
  AddedContext,
  AfterToolDecision,
  BeforeCompactionDecision,
  BeforeCompactionInfo,
  BeforeStepDecision,
  BeforeStepInfo,
  Clock,
  DisplayNotice,
  ModelErrorDecision,
  ModelErrorInfo,
  PluginCommand,
  PluginContext,
  PluginDefinition,
  PromptSubmitInfo,
  SessionEndInfo,
  SessionStartInfo,
  ToolCallInfo,
  TurnStoppingDecision,
  TurnStoppingInfo,
} from './plugin.js'

import { type PluginEntry, resolveEntry, validateConfig } from './plugin-use.js'

export type { BeforeToolVerdict, Decided, Reinput } from './interceptors-run.js'
export { type PluginEntry, type PluginUse, usePlugin } from './plugin-use.js'

/** What the agent lends the host so plugin contexts can reach it. */
export interface HostServices {
  readonly session: Session
  readonly cwd: string
  readonly clock: Clock
  readonly llm: LlmAdapter
  enqueue(message: UserMessage, options?: { source?: string }): void
  inject(message: DeveloperMessage, options?: { source?: string }): void
  display(notice: DisplayNotice): void
  /** Where failures with no caller to reject go (the agent's logger). */
  report: Report
}

/** A registered slash command and the plugin that offers it. */
export interface RegisteredCommand extends PluginCommand {
  readonly name: string
  readonly plugin: string
}

const commandNamePattern = /^[a-z][a-z0-9-]{0,63}$/

interface Disposer {
  readonly plugin: string
  readonly dispose: () => void | Promise<void>
}

const pluginNamePattern = /^[a-z0-9@][a-z0-9@/._-]{0,127}$/i

/**
 * Runs plugins for one agent: validates each config with the plugin's zod schema, sets
 * plugins up in order, collects their tools, commands and interceptors, runs interceptors
 * in plugin order (the first non-default decision wins; see `interceptors-run.ts` for how
 * a throwing interceptor fails closed), and disposes in reverse order on close.
 */
export class PluginHost {
  readonly #tools: Array<Tool<unknown>> = []
  readonly #interceptors: Registered[] = []
  readonly #disposers: Disposer[] = []
  readonly #names: string[] = []
  readonly #commands = new Map<string, RegisteredCommand>()
  #report: Report = () => {}
  #closed = false

  private constructor() {}

  /** The plugins' names, in setup order. */
  get plugins(): readonly string[] {
    return this.#names
  }

  /** Tools contributed by plugins (their `tools` first, then those registered in `setup`), in plugin order. */
  get tools(): ReadonlyArray<Tool<unknown>> {
    return this.#tools
  }

  /**
   * Validates every config, then sets the plugins up in order. If a setup throws, the
   * plugins already set up are disposed (in reverse) and {@link AgentError}
   * `PLUGIN_SETUP_FAILED` names the plugin that failed.
   */
  static async start(entries: readonly PluginEntry[], services: HostServices): Promise<PluginHost> {
    const host = new PluginHost()
    host.#report = services.report
    const resolved = entries.map((entry) => resolveEntry(entry))
    const seen = new Set<string>()
    // Validate everything before running any setup: a bad config costs no side effects.
    const configs = resolved.map(({ plugin, config }) => {
      if (!pluginNamePattern.test(plugin.name)) {
        throw new AgentError(
          'PLUGIN_CONFIG_INVALID',
          `plugin name ${JSON.stringify(plugin.name)} is invalid`,
          {
            plugin: plugin.name,
          },
        )
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
      return validateConfig(plugin, config)
    })
    for (let i = 0; i < resolved.length; i++) {
      const plugin = resolved[i]!.plugin
      try {
        await host.#setup(plugin, configs[i], services)
      } catch (error) {
        const disposeErrors = await host.#disposeAll()
        if (error instanceof AgentError && error.code !== 'PLUGIN_SETUP_FAILED') throw error
        throw new AgentError(
          'PLUGIN_SETUP_FAILED',
          `plugin '${plugin.name}' failed to set up: ${error instanceof Error ? error.message : String(error)}${
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

  async #setup(plugin: PluginDefinition<unknown>, config: unknown, services: HostServices): Promise<void> {
    const name = plugin.name
    this.#names.push(name)
    for (const tool of plugin.tools ?? []) this.#tools.push(tool)
    let inSetup = true
    const guard = (method: string, setupOnly: boolean): void => {
      if (this.#closed || (setupOnly && !inSetup)) {
        throw new AgentError(
          'PLUGIN_CONTEXT_CLOSED',
          `plugin '${name}' called ${method} ${this.#closed ? 'after the agent closed' : 'after setup; register tools and interceptors inside setup'}`,
          { plugin: name, method },
        )
      }
    }
    const context: PluginContext<unknown> = {
      name,
      config,
      session: services.session,
      cwd: services.cwd,
      clock: services.clock,
      llm: services.llm,
      host: {
        beforeCompaction: (info) => this.beforeCompaction(info),
        sessionStart: async (info) => {
          guard('host.sessionStart', false)
          const added = await this.sessionStart({ source: info.source })
          for (const { plugin, text } of added) {
            services.inject(
              { role: 'developer', content: [{ type: 'text', text }] },
              { source: `plugin/${plugin}` },
            )
          }
          return added
        },
      },
      registerCommand: (commandName, command) => {
        guard('registerCommand', true)
        if (!commandNamePattern.test(commandName)) {
          throw new AgentError(
            'COMMAND_INVALID',
            `plugin '${name}' registered command ${JSON.stringify(commandName)}: a command name is lower-case letters, digits and '-', starting with a letter`,
            { plugin: name, command: commandName },
          )
        }
        const taken = this.#commands.get(commandName)
        if (taken) {
          throw new AgentError(
            'COMMAND_INVALID',
            `plugin '${name}' registered command '${commandName}', which plugin '${taken.plugin}' already registered`,
            { plugin: name, command: commandName },
          )
        }
        this.#commands.set(commandName, {
          name: commandName,
          plugin: name,
          description: command.description,
          run: (args) => command.run(args),
        })
      },
      registerTool: (tool) => {
        guard('registerTool', true)
        this.#tools.push(tool as Tool<unknown>)
      },
      intercept: (interceptors) => {
        guard('intercept', true)
        this.#interceptors.push({ plugin: name, interceptors })
      },
      enqueue: (message, options) => {
        guard('enqueue', false)
        services.enqueue(message, { source: options?.source ?? `plugin/${name}` })
      },
      inject: (message, options) => {
        guard('inject', false)
        services.inject(message, { source: options?.source ?? `plugin/${name}` })
      },
      display: (kind, text) => {
        if (this.#closed) return
        services.display({ source: name, kind, text })
      },
    }
    try {
      const dispose = await plugin.setup?.(context)
      if (typeof dispose === 'function') this.#disposers.push({ plugin: name, dispose })
    } finally {
      inSetup = false
    }
  }

  /** The slash commands plugins registered, in registration order. */
  get commands(): readonly RegisteredCommand[] {
    return [...this.#commands.values()]
  }

  /** The command named `name`, if a plugin registered it. */
  command(name: string): RegisteredCommand | undefined {
    return this.#commands.get(name)
  }

  /** Before a step: the first `reject` wins. */
  beforeStep(info: BeforeStepInfo): Promise<Decided<BeforeStepDecision>> {
    return runBeforeStep(this.#interceptors, info)
  }

  /**
   * Before a tool runs: the first `deny` or `ask` wins; a rewrite (`input` on a decision)
   * that `reinput` accepts restarts the chain with the new call (see `runBeforeTool`).
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
   * Runs every disposer in reverse setup order, even when some throw; then throws
   * `PLUGIN_DISPOSE_FAILED` naming the plugins whose disposers failed. Idempotent.
   */
  async close(): Promise<void> {
    if (this.#closed) return
    const errors = await this.#disposeAll()
    this.#closed = true
    if (errors.length > 0) {
      throw new AgentError(
        'PLUGIN_DISPOSE_FAILED',
        `disposing plugin(s) ${errors.map((e) => `'${e.plugin}'`).join(', ')} failed: ${errors
          .map((e) => (e.error instanceof Error ? e.error.message : String(e.error)))
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
