import { type ActiveModelService, definePlugin, type ModelRoute, type PluginContext } from '@keel/agent'
import { KeelError } from '@keel/base'
import { z } from 'zod'
import { ownedEventTypes } from './events.generated.js'
import {
  choiceOf,
  decideSelection,
  describe,
  type Selection,
  type SelectionRefusal,
  type SelectionRequest,
  selectionProjection,
} from './selection.js'

/** A refused switch; `code` says why, the message what to do. */
export class ModelSelectionError extends KeelError<SelectionRefusal | 'MODEL_COMMAND_USAGE'> {}

/** `model.selection`: the selection in force, and switching it from code (what `/model` does). */
export interface ModelSelectionService {
  /** The selection in force, or undefined when the agent's own model applies. */
  current(): Selection | undefined
  /** Switches the model for the following steps; returns what happened. Throws {@link ModelSelectionError}. */
  select(request: SelectionRequest): string
}

declare module '@keel/tools' {
  interface ServiceMap {
    /** The model the agent's next requests use (the agent asks it before every step). */
    'model.active': ActiveModelService
    /** The model-selection plugin: the selection in force, and switching it. */
    'model.selection': ModelSelectionService
  }
}

/** The plugin's config, as a preset holds it. */
export const modelSelectionConfigSchema = z.strictObject({
  /** Model ids `/model` lists as choices (with what the agent knows of each). Default none. */
  models: z.array(z.string().min(1).max(200)).default([]),
})

/** The validated config of {@link modelSelectionPlugin}. */
export type ModelSelectionConfig = z.output<typeof modelSelectionConfigSchema>

const tokens = (n: number | undefined) =>
  n === undefined ? 'unknown' : `${n.toLocaleString('en-US')} tokens`

const sourceText: Record<ModelRoute['source'], string> = {
  selection: 'switched with /model',
  option: "the agent's (the preset's or --model)",
  adapter: "the endpoint adapter's default",
}

/** What `/model` without arguments answers: the route in force and how to change it. */
function describeRoute(ctx: PluginContext<ModelSelectionConfig>, defaultModel: string): string {
  const route = ctx.model()
  const lines = [
    `Model: ${describe(route.model, route.reasoningEffort)} — ${sourceText[route.source]}`,
    `  window ${tokens(route.contextWindow)}${route.windowSource === undefined ? '' : ` (${route.windowSource})`}; answers up to ${tokens(route.maxTokens)}`,
  ]
  if (route.reasoningEfforts.length > 0)
    lines.push(`  reasoning effort: ${route.reasoningEfforts.join(' | ')}`)
  const choices = [...new Set([...ctx.config.models, ...ctx.session.project(selectionProjection).used])]
  for (const id of choices) {
    if (id === route.model) continue
    const info = ctx.modelInfo(id)
    lines.push(
      `  also: ${id} (window ${tokens(info.contextWindow)}${info.reasoningEfforts.length > 0 ? `; effort ${info.reasoningEfforts.join(' | ')}` : ''})`,
    )
  }
  lines.push(
    `/model <id> [effort] switches for the following steps; /model default goes back to ${defaultModel}.`,
  )
  return lines.join('\n')
}

/** Parses `/model` arguments: nothing (show), `default`, or `<id> [effort]`. */
function parseArgs(args: string, source: string): SelectionRequest | 'show' {
  const words = args
    .trim()
    .split(/\s+/u)
    .filter((w) => w !== '')
  if (words.length === 0) return 'show'
  if (words.length > 2) {
    throw new ModelSelectionError(
      'MODEL_COMMAND_USAGE',
      `usage: /model [<id> [effort]] | /model default (got ${words.length} words)`,
    )
  }
  if (words[0] === 'default' && words.length === 1) return { model: null, source }
  return words[1] === undefined
    ? { model: words[0]!, source }
    : { model: words[0]!, reasoningEffort: words[1], source }
}

/**
 * The model-selection plugin: `/model [id] [effort]` (and `keel --model` at start, which runs
 * it with source `cli`) switches the model of the following steps, recorded as
 * `model/selection` (latest wins, so resume and fork keep it). It provides the agent's
 * `model.active` — the agent asks it before every step, so the request, its `max_tokens`,
 * `reasoning_effort` and the window compaction budgets with all follow the switch — and
 * `model.selection` for code.
 */
export const modelSelectionPlugin = definePlugin<ModelSelectionConfig>({
  name: '@keel/model-selection',
  config: modelSelectionConfigSchema,
  events: ownedEventTypes,
  provides: ['model.active', 'model.selection'],
  setup(ctx) {
    const state = () => ctx.session.project(selectionProjection)
    const active: ActiveModelService = { current: () => choiceOf(state()) }
    /** The agent's own model: what applies with no selection. */
    const defaultModel = (): string => ctx.model().defaultModel
    /** Decides and records a switch; what happened, and whether the model changed. */
    const choose = (request: SelectionRequest): { text: string; changed: boolean } => {
      const route = ctx.model()
      const fallback = defaultModel()
      const info = ctx.modelInfo(request.model ?? fallback)
      const decision = decideSelection(request, {
        current:
          route.reasoningEffort === undefined
            ? { model: route.model }
            : { model: route.model, reasoningEffort: route.reasoningEffort },
        selected: route.source === 'selection',
        defaultModel: fallback,
        info,
      })
      if (decision.action === 'refuse')
        throw new ModelSelectionError(decision.code, decision.reason, { model: request.model })
      if (decision.action === 'unchanged')
        return { text: `Model unchanged: ${decision.reason}.`, changed: false }
      ctx.session.append('model/selection', decision.data)
      const { data } = decision
      // an id the adapter does not know is taken (any OpenAI-compatible endpoint has its own), but said
      const unknown =
        info.assumed === true
          ? ` (assumed: the endpoint adapter does not know ${data.model}; check the id)`
          : ''
      const text = `Model: ${describe(data.model, data.reasoningEffort)}${data.default === true ? ' (the default)' : ''}, window ${tokens(data.contextWindow)}${unknown}, from the next step.`
      return { text, changed: true }
    }
    const selection: ModelSelectionService = {
      current: () => (choiceOf(state()) === undefined ? undefined : (state().latest ?? undefined)),
      select(request) {
        // a switch made by code is shown to the person; /model says it as its answer
        const { text, changed } = choose(request)
        if (changed) ctx.display('model', text)
        return text
      },
    }
    ctx.provide('model.active', active)
    ctx.provide('model.selection', selection)
    ctx.registerCommand('model', {
      description: 'show the model, or switch it for the following steps',
      usage: '[<id> [effort] | default]',
      run: async (args, { source }) => {
        const request = parseArgs(args, source)
        return request === 'show' ? describeRoute(ctx, defaultModel()) : choose(request).text
      },
    })
  },
})
