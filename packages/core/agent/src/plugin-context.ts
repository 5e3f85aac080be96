import type { DeveloperMessage, LlmAdapter, ToolSpec, UserMessage } from '@keel/llm'
import type { Session } from '@keel/session'
import type { ServiceKey, ServiceMap, Tool } from '@keel/tools'
import type { ChildSessions } from './child-sessions.js'
import type { CommandRegistry } from './commands.js'
import { AgentError } from './errors.js'
import type { Report } from './interceptors-run.js'
import { type ModelInfo, type ModelRoute, modelFacilities } from './model-route.js'
import type { ApprovalAnswerer } from './permission.js'
import type {
  AddedContext,
  BeforeCompactionInfo,
  Clock,
  DisplayNotice,
  Interceptors,
  ModelRetryPolicy,
  PluginContext,
  PluginDefinition,
  PluginTriggers,
} from './plugin.js'
import { defaultRetryOptions } from './retry.js'
import type { ServiceRegistry } from './services.js'
import { ToolBoard, type ToolSet } from './tool-sets.js'

/** What the agent lends the host so plugin contexts can reach it. */
export interface AgentFacilities {
  readonly session: Session
  readonly cwd: string
  readonly clock: Clock
  readonly llm: LlmAdapter
  enqueue(message: UserMessage, options?: { source?: string }): void
  inject(message: DeveloperMessage, options?: { source?: string }): void
  display(notice: DisplayNotice): void
  /** Makes the events appended so far durable (none to write without a store). */
  flush?(): Promise<void>
  /** The agent's tools (empty until every plugin is set up). */
  tools(): ReadonlyArray<Tool<unknown>>
  /** The agent's answerer chain (empty until every plugin is set up; none without it). */
  answerers?(): readonly ApprovalAnswerer[]
  /** Child sessions, when the embedder lent them. */
  readonly sessions?: ChildSessions | undefined
  /**
   * The tool set of a plugin (the same one for every call with that name). A host without
   * an agent (a test driving `PluginHost` by hand) may leave it out: sets then hold their
   * tools and offer them to no model.
   */
  toolSet?(plugin: string): ToolSet
  /** Their specs as the requests carry them (empty until every plugin is set up). Default none. */
  toolSpecs?(): readonly ToolSpec[]
  /** The route of the next model request. Default: the adapter's model and table, no options. */
  model?(): ModelRoute
  /** What the agent knows about a model id. Default: the adapter's table. */
  modelInfo?(model: string): ModelInfo
  /** Default: the agent's default retry options. */
  readonly modelRetry?: ModelRetryPolicy
  /** Where failures with no caller to reject go (the agent's logger). */
  report: Report
}

/** Where a plugin context puts what the plugin contributes (the host's registries). */
export interface ContributionSink {
  readonly tools: Array<Tool<unknown>>
  readonly commands: CommandRegistry
  readonly interceptors: Array<{ readonly plugin: string; readonly interceptors: Interceptors }>
  readonly answerers: ApprovalAnswerer[]
  readonly services: ServiceRegistry
  readonly view: PluginTriggers
  closed(): boolean
}

/**
 * A plugin's context while it is set up. `done(succeeded)` ends setup (the setup-only
 * methods then refuse); after a setup that returned, it checks that every service the
 * plugin listed in `provides` was provided.
 */
export interface SetupContext {
  readonly context: PluginContext<unknown>
  done(succeeded: boolean): void
}

/**
 * Builds the context one plugin's `setup` gets. Everything it contributes goes to `sink`;
 * services only under keys its definition declares (`provides`, `requires`, `optional`),
 * so the setup order the host computed from the declarations is the truth.
 */
export function createPluginContext(
  plugin: PluginDefinition<unknown>,
  config: unknown,
  services: AgentFacilities,
  sink: ContributionSink,
): SetupContext {
  const name = plugin.name
  let inSetup = true
  const guard = (method: string, setupOnly: boolean): void => {
    if (sink.closed() || (setupOnly && !inSetup)) {
      throw new AgentError(
        'PLUGIN_CONTEXT_CLOSED',
        `plugin '${name}' called ${method} ${sink.closed() ? 'after the agent closed' : 'after setup; register tools, commands, interceptors and services inside setup'}`,
        { plugin: name, method },
      )
    }
  }
  const undeclared = (method: string, key: ServiceKey, list: string): AgentError =>
    new AgentError(
      'PLUGIN_SERVICE_UNDECLARED',
      `plugin '${name}' called ${method}('${key}') but does not list '${key}' in its definition's \`${list}\`; declare it so the host can order the plugins and check the provider`,
      { plugin: name, key, method },
    )
  // A host started without the agent's model facilities (a hand-built rig): the adapter alone.
  const fallback = modelFacilities(
    services.llm,
    {
      model: undefined,
      maxTokens: undefined,
      contextWindows: {},
      retry: defaultRetryOptions,
      random: Math.random,
    },
    { services: () => sink.services, turnMaxTokens: () => undefined },
  )
  const context: PluginContext<unknown> = {
    name,
    config,
    session: services.session,
    cwd: services.cwd,
    clock: services.clock,
    llm: services.llm,
    model: () => (services.model ?? fallback.model)(),
    modelInfo: (model) => (services.modelInfo ?? fallback.modelInfo)(model),
    toolSpecs: () => services.toolSpecs?.() ?? [],
    modelRetry: services.modelRetry ?? fallback.modelRetry,
    trigger: {
      beforeCompaction: (info: BeforeCompactionInfo) => sink.view.beforeCompaction(info),
      sessionStart: async (info): Promise<readonly AddedContext[]> => {
        guard('trigger.sessionStart', false)
        return sink.view.sessionStart(info)
      },
    },
    services: sink.services,
    registerCommand: (commandName, command) => {
      guard('registerCommand', true)
      sink.commands.register(name, commandName, command)
    },
    registerTool: (tool) => {
      guard('registerTool', true)
      sink.tools.push(tool as Tool<unknown>)
    },
    registerToolSet: () => {
      guard('registerToolSet', true)
      const set = services.toolSet?.(name) ?? new ToolBoard(() => {}).set(name)
      // Replacing after the agent closed would change nothing anyone sees: refuse it.
      return {
        replace: (tools) => {
          guard('toolSet.replace', false)
          set.replace(tools)
        },
        current: () => set.current(),
      }
    },
    intercept: (interceptors) => {
      guard('intercept', true)
      sink.interceptors.push({ plugin: name, interceptors })
    },
    registerAnswerer: (answerer) => {
      guard('registerAnswerer', true)
      sink.answerers.push(answerer)
    },
    provide: <K extends ServiceKey>(key: K, service: ServiceMap[K]) => {
      guard('provide', true)
      if (!(plugin.provides ?? []).includes(key)) throw undeclared('provide', key, 'provides')
      sink.services.provide(name, key, service)
    },
    use: <K extends ServiceKey>(key: K): ServiceMap[K] => {
      guard('use', false)
      if (!(plugin.requires ?? []).includes(key)) throw undeclared('use', key, 'requires')
      const service = sink.services.get(key)
      if (service === undefined) {
        throw new AgentError(
          'PLUGIN_SERVICE_MISSING',
          `plugin '${name}' requires service '${key}', which no plugin of this agent provides`,
          { plugin: name, key },
        )
      }
      return service
    },
    useOptional: <K extends ServiceKey>(key: K): ServiceMap[K] | undefined => {
      guard('useOptional', false)
      if (![...(plugin.optional ?? []), ...(plugin.requires ?? [])].includes(key)) {
        throw undeclared('useOptional', key, 'optional')
      }
      return sink.services.get(key)
    },
    tools: () => services.tools(),
    answerers: () => services.answerers?.() ?? [],
    sessions: services.sessions,
    enqueue: (message, options) => {
      guard('enqueue', false)
      services.enqueue(message, { source: options?.source ?? `plugin/${name}` })
    },
    inject: (message, options) => {
      guard('inject', false)
      services.inject(message, { source: options?.source ?? `plugin/${name}` })
    },
    display: (kind, text) => {
      if (sink.closed()) return
      services.display({ source: name, kind, text })
    },
    flush: () => services.flush?.() ?? Promise.resolve(),
  }
  return {
    context,
    done: (succeeded) => {
      inSetup = false
      if (!succeeded) return
      for (const key of plugin.provides ?? []) {
        if (sink.services.providerOf(key) !== name) {
          throw new AgentError(
            'PLUGIN_SERVICE_NOT_PROVIDED',
            `plugin '${name}' lists service '${key}' in \`provides\` but its setup did not call provide('${key}', …)`,
            { plugin: name, key },
          )
        }
      }
    },
  }
}
