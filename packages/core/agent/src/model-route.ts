import { boundIssues } from '@keel/base'
import type { LlmAdapter } from '@keel/llm'
import type { ServiceView } from '@keel/tools'
import { z } from 'zod'
import { AgentError } from './errors.js'
import type { RouteSource } from './events.js'
import type { ModelRetryPolicy } from './plugin.js'
import { backoffDelay, type RetryOptions } from './retry.js'

export type { RouteSource }

/**
 * What a model-selection plugin chose for the following steps: the model id, the reasoning
 * effort (where the model has one) and the context window the choice brings.
 */
export interface ModelChoice {
  readonly model: string
  readonly reasoningEffort?: string
  readonly contextWindow?: number
}

/**
 * `model.active`: the one place a plugin decides the model of the agent's requests. The
 * agent asks `current()` before every step (and whenever a plugin asks `ctx.model()`); an
 * `undefined` answer keeps the agent's own model (its `model` option, else the adapter's).
 * One provider per agent, as for every service. The providing plugin declares the key, as
 * every provider does (`declare module '@keel/tools' { interface ServiceMap { 'model.active':
 * ActiveModelService } }`, as `@keel/model-selection` does); the agent checks what it answers.
 */
export interface ActiveModelService {
  current(): ModelChoice | undefined
}

/** The service key of {@link ActiveModelService}. */
export const ACTIVE_MODEL_KEY = 'model.active'

const choiceSchema = z.strictObject({
  model: z.string().min(1).max(200),
  reasoningEffort: z.string().min(1).max(40).optional(),
  contextWindow: z.number().int().positive().optional(),
})

/**
 * The `model.active` choice, when a plugin provides the service: validated, so a provider
 * answering something else fails the step with `MODEL_CHOICE_INVALID` naming the plugin.
 */
export function activeChoice(services: ServiceView): ModelChoice | undefined {
  const service = (services.get as (key: string) => unknown)(ACTIVE_MODEL_KEY)
  if (service === undefined) return undefined
  // The registry behind an agent's view names the provider; a bare view does not.
  const registry = services as ServiceView & { providerOf?: (key: string) => string | undefined }
  const provider = registry.providerOf?.(ACTIVE_MODEL_KEY) ?? 'unknown'
  if (typeof (service as Partial<ActiveModelService>).current !== 'function') {
    throw new AgentError(
      'MODEL_CHOICE_INVALID',
      `plugin '${provider}' provides '${ACTIVE_MODEL_KEY}' without a current() method`,
      {
        plugin: provider,
      },
    )
  }
  const answer: unknown = (service as ActiveModelService).current()
  if (answer === undefined) return undefined
  const parsed = choiceSchema.safeParse(answer)
  if (!parsed.success) {
    const issue = boundIssues(parsed.error.issues).issues[0]!
    throw new AgentError(
      'MODEL_CHOICE_INVALID',
      `plugin '${provider}' answered ${ACTIVE_MODEL_KEY}.current() with an invalid choice: ${issue.path || 'the value'}: ${issue.message}`,
      { plugin: provider },
    )
  }
  const choice: { -readonly [K in keyof ModelChoice]: ModelChoice[K] } = { model: parsed.data.model }
  if (parsed.data.reasoningEffort !== undefined) choice.reasoningEffort = parsed.data.reasoningEffort
  if (parsed.data.contextWindow !== undefined) choice.contextWindow = parsed.data.contextWindow
  return choice
}

/** What this agent knows about one model id. */
export interface ModelInfo {
  readonly model: string
  /** Input + output tokens the model takes, when anything knows it. */
  readonly contextWindow?: number
  readonly windowSource?: RouteSource
  /** Most tokens the model may write in one answer, when the adapter knows it. */
  readonly maxOutputTokens?: number
  /** Whether the model streams reasoning. */
  readonly reasoning: boolean
  /** The reasoning effort levels it accepts (empty: the provider has none for it). */
  readonly reasoningEfforts: readonly string[]
  /** The adapter does not know the model: its output limit (and the window, unless given) are assumed. */
  readonly assumed?: boolean
}

/** The route of the agent's next model request: provider, endpoint, model and its budgets. */
export interface ModelRoute extends ModelInfo {
  readonly provider: string
  /** Where the request goes, without credentials, when the adapter says. */
  readonly endpoint?: string
  /** Where the model id came from. */
  readonly source: RouteSource
  /** The model the agent runs without a selection: its `model` option, else the adapter's default. */
  readonly defaultModel: string
  /** The output budget the request carries (`max_tokens`), when known. */
  readonly maxTokens?: number
  readonly reasoningEffort?: string
}

/** The agent's own say in the route (its options). */
export interface RouteDefaults {
  readonly model: string | undefined
  readonly maxTokens: number | undefined
  readonly contextWindows: Readonly<Record<string, number>>
}

/**
 * What the agent knows of `model`: the window of a `choice` for it, else the agent's
 * `contextWindows` entry, else the adapter's capability table.
 */
export function modelInfo(
  llm: LlmAdapter,
  defaults: RouteDefaults,
  model: string,
  choice?: ModelChoice,
): ModelInfo {
  const capabilities = llm.capabilities?.(model)
  const window: [number | undefined, RouteSource | undefined] =
    choice?.contextWindow !== undefined
      ? [choice.contextWindow, 'selection']
      : defaults.contextWindows[model] !== undefined
        ? [defaults.contextWindows[model], 'option']
        : capabilities
          ? [capabilities.contextWindow, 'adapter']
          : [undefined, undefined]
  const info: { -readonly [K in keyof ModelInfo]: ModelInfo[K] } = {
    model,
    reasoning: capabilities?.reasoning ?? false,
    reasoningEfforts: capabilities?.reasoningEfforts ?? [],
  }
  if (window[0] !== undefined) {
    info.contextWindow = window[0]
    info.windowSource = window[1]!
  }
  if (capabilities) info.maxOutputTokens = capabilities.maxOutputTokens
  if (capabilities?.assumed === true) info.assumed = true
  return info
}

/**
 * The route of the next request: the `model.active` choice when a plugin provides one and it
 * answers, else the agent's `model` option, else the adapter's default model; `max_tokens`
 * is the turn's (`SendOptions.maxTokens`), else the agent's, else the model's
 * `maxOutputTokens`.
 */
export function resolveRoute(
  llm: LlmAdapter,
  defaults: RouteDefaults,
  services: ServiceView,
  turnMaxTokens?: number,
): ModelRoute {
  const choice = activeChoice(services)
  const defaultModel = defaults.model ?? llm.model
  const [model, source]: [string, RouteSource] = choice
    ? [choice.model, 'selection']
    : [defaultModel, defaults.model !== undefined ? 'option' : 'adapter']
  const info = modelInfo(llm, defaults, model, choice)
  const route: { -readonly [K in keyof ModelRoute]: ModelRoute[K] } = {
    ...info,
    provider: llm.provider,
    source,
    defaultModel,
  }
  if (llm.endpoint !== undefined) route.endpoint = llm.endpoint
  const maxTokens = turnMaxTokens ?? defaults.maxTokens ?? info.maxOutputTokens
  if (maxTokens !== undefined) route.maxTokens = maxTokens
  if (choice?.reasoningEffort !== undefined) route.reasoningEffort = choice.reasoningEffort
  return Object.freeze(route)
}

/**
 * What an agent lends its plugins about its model: the route of the next request (the
 * running turn's own `max_tokens` included), another id's facts, and its retry policy.
 */
export function modelFacilities(
  llm: LlmAdapter,
  defaults: RouteDefaults & { readonly retry: RetryOptions; readonly random: () => number },
  live: { readonly services: () => ServiceView; readonly turnMaxTokens: () => number | undefined },
): {
  route(turnMaxTokens?: number): ModelRoute
  model(): ModelRoute
  modelInfo(model: string): ModelInfo
  modelRetry: ModelRetryPolicy
} {
  // The route without a model.active choice depends only on the max_tokens asked for (the
  // adapter's capabilities of one model id are fixed): kept, one object per value.
  let plain: { maxTokens: number | undefined; route: ModelRoute } | undefined
  const route = (turnMaxTokens?: number) => {
    const services = live.services()
    const maxTokens = turnMaxTokens ?? live.turnMaxTokens()
    if ((services.get as (key: string) => unknown)(ACTIVE_MODEL_KEY) !== undefined)
      return resolveRoute(llm, defaults, services, maxTokens)
    if (plain === undefined || plain.maxTokens !== maxTokens)
      plain = { maxTokens, route: resolveRoute(llm, defaults, services, maxTokens) }
    return plain.route
  }
  return {
    route,
    model: () => route(),
    modelInfo: (model) => modelInfo(llm, defaults, model),
    modelRetry: {
      maxRetries: defaults.retry.maxRetries,
      delay: (failures, retryAfterMs) =>
        backoffDelay(failures, defaults.retry, defaults.random, retryAfterMs),
    },
  }
}
