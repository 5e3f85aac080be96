// Agent wiring of the compaction engine. Everything agent-specific lives in this module:
// the automatic trigger (`beforeStep`), the overflow trigger (`modelError`), the `/compact`
// command (`registerCommand`) and PreCompact hooks (`ctx.trigger.beforeCompaction`).
import {
  definePlugin,
  type ModelErrorDecision,
  type ModelErrorInfo,
  type PluginContext,
  type PluginDefinition,
} from '@keel/agent'
import type { LlmAdapter } from '@keel/llm'
// The service keys this plugin uses when their plugins run beside it (types only: no code of theirs runs here).
import type {} from '@keel/todo'
import type {} from '@keel/user-approval'
import {
  type BeforeCompactionDecision,
  type BeforeCompactionInfo,
  type CompactionResult,
  Compactor,
} from './compactor.js'
import { type CompactionConfig, compactionConfigSchema } from './config.js'
import { ownedEventTypes } from './events.generated.js'
import type { CompactionService } from './services.js'
import { formatCount } from './tokens.js'

/** The `display` kind of each notice: `compaction`, `compaction-failed`, `compaction-guard`. */
export const DISPLAY_KINDS = {
  compacted: 'compaction',
  failed: 'compaction-failed',
  guard: 'compaction-guard',
} as const

/** What the plugin factory takes besides the JSON config. */
export interface CompactionPluginOptions {
  /** The model that writes summaries; default the agent's (`ctx.llm`). */
  readonly llm?: LlmAdapter
  /**
   * Runs before every compaction instead of the host's `beforeCompaction` interceptors
   * (which is where the hooks plugin's PreCompact hooks run); for tests and embedders.
   */
  readonly beforeCompaction?: (
    info: BeforeCompactionInfo,
  ) => BeforeCompactionDecision | Promise<BeforeCompactionDecision>
}

/** Describes a compaction result for the user (the `/compact` command's answer). */
export function describeResult(result: CompactionResult): string {
  const tokens = `${formatCount(result.tokensBefore)} → ${formatCount(result.tokensAfter)} tokens`
  switch (result.status) {
    case 'compacted':
      if (result.pruned === 0 && !result.summarized) {
        return `Nothing was compacted (about ${formatCount(result.tokensAfter)} tokens): no old tool output to prune, no oversized message to cut, and too little older history outside the recent tail to summarize.`
      }
      return `Compacted: ${tokens}; ${result.pruned} output(s) pruned${result.summarized ? ', older history summarized' : ', nothing to summarize'}.`
    case 'failed':
      if (result.error?.code === 'COMPACTION_ABORTED') return 'Compaction cancelled: nothing was changed.'
      return `Compaction failed (${result.error?.code}): ${result.error?.message} The context is unchanged apart from ${result.pruned} pruned output(s).`
    case 'cancelled':
      return `Compaction cancelled: ${result.reason}`
    default:
      return `Compaction skipped: ${result.reason}`
  }
}

/** What runs after every compaction the plugin starts (it may add to the result's effects). */
export type AfterCompaction = (result: CompactionResult) => Promise<CompactionResult>

const asIs: AfterCompaction = async (result) => result

/** The `/compact [instructions]` command; `signal` (the command's) stops the summary call. */
export async function runCompactCommand(
  compactor: Compactor,
  args: string,
  after: AfterCompaction = asIs,
  signal?: AbortSignal,
): Promise<string> {
  const instructions = args.trim()
  if (compactor.busy) return 'A compaction is already running; try again when it ends.'
  const result = await compactor.compact({
    trigger: 'manual',
    reported: true,
    ...(instructions === '' ? {} : { instructions }),
    ...(signal === undefined ? {} : { signal }),
  })
  return describeResult(await after(result))
}

/**
 * The overflow trigger: on a context-overflow error, compact and ask for the step to be
 * retried, at most once per step (`retried` remembers the steps). Other errors, a second
 * overflow in the same step, or a compaction that changed nothing fail the step.
 */
export async function recoverFromOverflow(
  compactor: Compactor,
  info: ModelErrorInfo,
  retried: Set<string>,
  after: AfterCompaction = asIs,
): Promise<ModelErrorDecision> {
  if (info.signal?.aborted) return { action: 'fail' }
  if (info.error.kind !== 'context-overflow') return { action: 'fail' }
  const key = `${info.turn}:${info.step}`
  if (retried.has(key) || compactor.busy) return { action: 'fail' }
  // Only the current turn's steps matter: forget the others so the set stays small.
  for (const seen of retried) if (!seen.startsWith(`${info.turn}:`)) retried.delete(seen)
  retried.add(key)
  const result = await after(
    await compactor.compact({
      trigger: 'overflow',
      ...(info.signal === undefined ? {} : { signal: info.signal }),
    }),
  )
  const changed = result.status === 'compacted' && (result.pruned > 0 || result.summarized)
  return changed ? { action: 'retry' } : { action: 'fail' }
}

/**
 * The compaction plugin: before each step it compacts when the surface is over the
 * threshold (and the loop guard allows); on a context-overflow error it compacts and has
 * the step's model call re-run once (`modelError`); it registers `/compact [instructions]`;
 * before every run it asks the host's `beforeCompaction` interceptors (PreCompact hooks),
 * and it shows what happened with `display` (kinds {@link DISPLAY_KINDS}). It provides
 * `compaction.run`, and carries the `todo.list` and `approval.policy` of the plugins beside
 * it into every summary. The engine is {@link Compactor}.
 */
export function compactionPlugin(options: CompactionPluginOptions = {}): PluginDefinition<CompactionConfig> {
  return definePlugin<CompactionConfig>({
    name: '@keel/compaction',
    config: compactionConfigSchema,
    events: ownedEventTypes,
    provides: ['compaction.run'],
    optional: ['todo.list', 'approval.policy'],
    setup(ctx: PluginContext<CompactionConfig>) {
      const beforeCompaction =
        options.beforeCompaction ??
        (async (info: BeforeCompactionInfo): Promise<BeforeCompactionDecision> => {
          const { decision, plugin } = await ctx.trigger.beforeCompaction(info)
          return decision.action === 'cancel' && plugin !== undefined
            ? { action: 'cancel', reason: `${decision.reason} (${plugin})` }
            : decision
        })
      const todos = ctx.useOptional('todo.list')
      const policy = ctx.useOptional('approval.policy')
      const engine = new Compactor({
        session: ctx.session,
        llm: options.llm ?? ctx.llm,
        config: ctx.config,
        // The model the agent runs now (a /model switch included): its window and output budget.
        model: () => ctx.model(),
        tools: () => ctx.toolSpecs(),
        retry: ctx.modelRetry,
        clock: ctx.clock,
        beforeCompaction,
        onNotice: (notice) => ctx.display(DISPLAY_KINDS[notice.kind], notice.text),
        workingState: {
          ...(todos === undefined ? {} : { todos: () => todos.render() }),
          ...(policy === undefined ? {} : { policy: () => policy.current() }),
        },
      })
      /**
       * Every compaction of this agent ends here, whatever triggered it. Only a summary drops
       * earlier context from the surface (prunes keep every message), so only then would
       * the session's start context need to be given again.
       */
      const after: AfterCompaction = async (result) => {
        if (result.status !== 'compacted' || !result.summarized) return result
        // History was replaced: session-start handlers (SessionStart hooks with source
        // `compact`) run again; the host injects what they add before the next step.
        await ctx.trigger.sessionStart({ source: 'compact' })
        return result
      }
      const retried = new Set<string>()
      ctx.intercept({
        async beforeStep({ signal }) {
          await after(await engine.compactIfNeeded(signal === undefined ? {} : { signal }))
          return { action: 'enter' }
        },
        modelError: (info) => recoverFromOverflow(engine, info, retried, after),
      })
      ctx.registerCommand('compact', {
        description: 'compact the conversation now',
        usage: '[what the summary should focus on]',
        run: (args, { signal }) => runCompactCommand(engine, args, after, signal),
      })
      const service: CompactionService = {
        compact: async ({ instructions, signal } = {}) =>
          after(
            await engine.compact({
              trigger: 'manual',
              ...(instructions === undefined ? {} : { instructions }),
              ...(signal === undefined ? {} : { signal }),
            }),
          ),
        get busy() {
          return engine.busy
        },
        measure: () => ({
          ...engine.measure(),
          thresholdTokens: engine.thresholdTokens,
          contextWindow: engine.contextWindow,
        }),
      }
      ctx.provide('compaction.run', service)
    },
  })
}
