import type { ModelChoice, ModelInfo } from '@keel/agent'
import { type Projection, registerProjection, type SessionEventMap } from '@keel/session'

/** A recorded selection, as `model/selection` holds it. */
export type Selection = SessionEventMap['model/selection']

/** What the log says about model selection: the latest switch (null before the first), and every model used. */
export interface SelectionState {
  readonly latest: Selection | null
  /** Models selected so far, oldest first, each once (what `/model` lists as used before). */
  readonly used: readonly string[]
}

/** Folds `model/selection`: the latest wins. */
export const selectionProjection: Projection<SelectionState> = registerProjection<SelectionState>({
  name: '@keel/model-selection/selection',
  init: () => ({ latest: null, used: [] }),
  apply(state, event) {
    if (event.type !== 'model/selection') return state
    const { model } = event.data
    return {
      latest: event.data,
      used: event.data.default === true || state.used.includes(model) ? state.used : [...state.used, model],
    }
  },
  checkpoint: { version: 1 },
})

/** The choice the agent's `model.active` answers with: the latest selection, unless it ended (`default`). */
export function choiceOf(state: SelectionState): ModelChoice | undefined {
  const latest = state.latest
  if (latest === null || latest.default === true) return undefined
  const choice: { -readonly [K in keyof ModelChoice]: ModelChoice[K] } = { model: latest.model }
  if (latest.reasoningEffort !== undefined) choice.reasoningEffort = latest.reasoningEffort
  if (latest.contextWindow !== undefined) choice.contextWindow = latest.contextWindow
  return choice
}

/** A switch someone asked for. `model: null` ends the selection (back to the agent's own model). */
export interface SelectionRequest {
  readonly model: string | null
  readonly reasoningEffort?: string
  readonly source: string
}

/** The facts a switch is decided on, gathered by the plugin from the agent. */
export interface SelectionFacts {
  /** The model in force now (the agent's route). */
  readonly current: { readonly model: string; readonly reasoningEffort?: string }
  /** Whether a selection is in force (not the agent's own model). */
  readonly selected: boolean
  /** The agent's own model (its `model` option, else the adapter's). */
  readonly defaultModel: string
  /** What the agent knows of the requested model (or of the default one, for `model: null`). */
  readonly info: ModelInfo
}

/** Why a switch is refused; each code says what to do. */
export type SelectionRefusal =
  /** Not a model id: empty, longer than 200 characters, or holding whitespace. */
  | 'MODEL_ID_INVALID'
  /** A reasoning effort for a model with no levels. */
  | 'MODEL_EFFORT_UNSUPPORTED'
  /** A reasoning effort the model does not accept. */
  | 'MODEL_EFFORT_INVALID'

/** What to do with a switch. */
export type SelectionDecision =
  | { readonly action: 'select'; readonly data: Selection }
  | { readonly action: 'unchanged'; readonly reason: string }
  | { readonly action: 'refuse'; readonly code: SelectionRefusal; readonly reason: string }

const modelIdPattern = /^\S{1,200}$/u

/**
 * Decides a switch from the request and the facts, nothing else: a valid id; an effort only
 * for a model with levels, and one of them; nothing recorded when it changes nothing. The
 * recorded selection carries the window the model brings, as the agent knows it.
 */
export function decideSelection(request: SelectionRequest, facts: SelectionFacts): SelectionDecision {
  const { current, info } = facts
  if (request.model === null) {
    if (!facts.selected)
      return { action: 'unchanged', reason: `already on the default model ${current.model}` }
    const data: Selection = {
      model: facts.defaultModel,
      default: true,
      source: request.source,
      previous: current.model,
    }
    if (info.contextWindow !== undefined) data.contextWindow = info.contextWindow
    return { action: 'select', data }
  }
  const model = request.model
  if (!modelIdPattern.test(model)) {
    return {
      action: 'refuse',
      code: 'MODEL_ID_INVALID',
      reason: `${JSON.stringify(model.slice(0, 60))} is not a model id (1–200 characters, no spaces)`,
    }
  }
  const effort = request.reasoningEffort
  if (effort !== undefined) {
    if (info.reasoningEfforts.length === 0) {
      return {
        action: 'refuse',
        code: 'MODEL_EFFORT_UNSUPPORTED',
        reason: `${model} has no reasoning effort levels that this agent knows of; switch without '${effort}'`,
      }
    }
    if (!info.reasoningEfforts.includes(effort)) {
      return {
        action: 'refuse',
        code: 'MODEL_EFFORT_INVALID',
        reason: `${model} takes reasoning effort ${info.reasoningEfforts.join(', ')}; not '${effort}'`,
      }
    }
  }
  if (facts.selected && model === current.model && effort === current.reasoningEffort) {
    return { action: 'unchanged', reason: `already using ${describe(model, effort)}` }
  }
  const data: Selection = { model, source: request.source, previous: current.model }
  if (effort !== undefined) data.reasoningEffort = effort
  if (info.contextWindow !== undefined) data.contextWindow = info.contextWindow
  return { action: 'select', data }
}

/** `deepseek-v4-pro (effort high)`. */
export function describe(model: string, effort?: string): string {
  return effort === undefined ? model : `${model} (effort ${effort})`
}
