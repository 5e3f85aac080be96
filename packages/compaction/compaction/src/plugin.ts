// ─────────────────────────────────────────────────────────────────────────────────────────
// Agent wiring of the compaction engine. Everything agent-specific lives in this module.
//
// INTEGRATION (after the agent branch with `llm`, `registerCommand`, `modelError` and
// `beforeCompaction` is merged): the structural `AgentAdditions` / `ModelErrorInterceptor`
// types below mirror those signatures, so the wiring lights up without code changes once
// the context carries them. The integrator should (1) replace these local types by the
// agent's own, (2) pass the host's `beforeCompaction` (PreCompact hooks; @keel/hooks'
// `hookLifecycleInterceptors(...).beforeCompaction` has exactly this shape, see
// tests/hooks.test.ts) as `CompactorOptions.beforeCompaction`, and (3) add the
// agent-level overflow retry test (see tests/overflow.test.ts).
// ─────────────────────────────────────────────────────────────────────────────────────────
import { definePlugin, type Interceptors, type PluginContext, type PluginDefinition } from '@keel/agent'
import type { LlmAdapter, LlmError } from '@keel/llm'
import {
  type BeforeCompactionDecision,
  type BeforeCompactionInfo,
  type CompactionResult,
  Compactor,
} from './compactor.js'
import { type CompactionConfig, CompactionError, compactionConfigSchema } from './config.js'
import { formatCount } from './tokens.js'

/** The `display` kind of each notice: `compaction`, `compaction-failed`, `compaction-guard`. */
export const DISPLAY_KINDS = {
  compacted: 'compaction',
  failed: 'compaction-failed',
  guard: 'compaction-guard',
} as const

/** The agent additions this plugin uses when present (signatures of the agent branch). */
interface AgentAdditions {
  readonly llm?: LlmAdapter
  registerCommand?(
    name: string,
    // biome-ignore lint/suspicious/noConfusingVoidType: the agent branch's exact signature
    command: { description: string; run(args: string): Promise<string | void> },
  ): void
  beforeCompaction?(info: BeforeCompactionInfo): BeforeCompactionDecision | Promise<BeforeCompactionDecision>
}

/** The model-error interception point of the agent branch. */
interface ModelErrorInterceptor {
  modelError?(info: {
    turn: number
    step: number
    error: LlmError
  }): { action: 'fail' } | { action: 'retry' } | Promise<{ action: 'fail' } | { action: 'retry' }>
}

/** What the plugin factory takes besides the JSON config. */
export interface CompactionPluginOptions {
  /** The model that writes summaries; the agent's (`ctx.llm`) once the agent provides one. */
  readonly llm?: LlmAdapter
  /** PreCompact hooks, when the host does not provide them. */
  readonly beforeCompaction?: (
    info: BeforeCompactionInfo,
  ) => BeforeCompactionDecision | Promise<BeforeCompactionDecision>
}

/** The compaction plugin, with a handle on its engine once set up. */
export interface CompactionPlugin extends PluginDefinition<CompactionConfig> {
  /** The engine of the agent this plugin is set up in; undefined before setup and after close. */
  readonly compactor: Compactor | undefined
  /** Compacts now (the manual trigger), with optional focus instructions. */
  compact(instructions?: string): Promise<CompactionResult>
}

/** Describes a compaction result for the user (the `/compact` command's answer). */
export function describeResult(result: CompactionResult): string {
  const tokens = `${formatCount(result.tokensBefore)} → ${formatCount(result.tokensAfter)} tokens`
  switch (result.status) {
    case 'compacted':
      return `Compacted: ${tokens}; ${result.pruned} output(s) pruned${result.summarized ? ', older history summarized' : ', nothing to summarize'}.`
    case 'failed':
      return `Compaction failed (${result.error?.code}): ${result.error?.message} The context is unchanged apart from ${result.pruned} pruned output(s).`
    case 'cancelled':
      return `Compaction cancelled: ${result.reason}`
    default:
      return `Compaction skipped: ${result.reason}`
  }
}

/** The `/compact [instructions]` command. */
export async function runCompactCommand(compactor: Compactor, args: string): Promise<string> {
  const instructions = args.trim()
  if (compactor.busy) return 'A compaction is already running; try again when it ends.'
  const result = await compactor.compact(
    instructions === '' ? { trigger: 'manual' } : { trigger: 'manual', instructions },
  )
  return describeResult(result)
}

/**
 * The overflow trigger: on a context-overflow error, compact and ask for the step to be
 * retried, at most once per step (`retried` remembers the steps). Other errors, a second
 * overflow in the same step, or a compaction that changed nothing fail the step.
 */
export async function recoverFromOverflow(
  compactor: Compactor,
  info: { turn: number; step: number; error: LlmError },
  retried: Set<string>,
): Promise<{ action: 'fail' } | { action: 'retry' }> {
  if (info.error.kind !== 'context-overflow') return { action: 'fail' }
  const key = `${info.turn}:${info.step}`
  if (retried.has(key) || compactor.busy) return { action: 'fail' }
  retried.add(key)
  const result = await compactor.compact({ trigger: 'overflow' })
  const changed = result.status === 'compacted' && (result.pruned > 0 || result.summarized)
  return changed ? { action: 'retry' } : { action: 'fail' }
}

/**
 * The compaction plugin: before each step it compacts when the surface is over the
 * threshold (and the loop guard allows); it shows what happened with `display` (kinds
 * {@link DISPLAY_KINDS}); once the agent offers them it registers `/compact` and
 * recovers from context-overflow errors. The engine is {@link Compactor}.
 */
export function compactionPlugin(options: CompactionPluginOptions = {}): CompactionPlugin {
  let compactor: Compactor | undefined
  const definition: PluginDefinition<CompactionConfig> = definePlugin<CompactionConfig>({
    name: '@keel/compaction',
    config: compactionConfigSchema,
    events: ['compaction/start', 'compaction/prune', 'compaction/summary', 'compaction/end'],
    setup(ctx: PluginContext<CompactionConfig> & AgentAdditions) {
      const llm = options.llm ?? ctx.llm
      if (!llm) {
        throw new CompactionError(
          'COMPACTION_CONFIG_INVALID',
          'the compaction plugin needs a model for summaries: pass compactionPlugin({ llm })',
          { path: 'llm' },
        )
      }
      const hook = options.beforeCompaction ?? ctx.beforeCompaction?.bind(ctx)
      const engine = new Compactor({
        session: ctx.session,
        llm,
        config: ctx.config,
        ...(hook === undefined ? {} : { beforeCompaction: hook }),
        onNotice: (notice) => ctx.display(DISPLAY_KINDS[notice.kind], notice.text),
      })
      compactor = engine
      const retried = new Set<string>()
      const interceptors: Interceptors & ModelErrorInterceptor = {
        async beforeStep() {
          await engine.compactIfNeeded()
          return { action: 'enter' }
        },
        modelError: (info) => recoverFromOverflow(engine, info, retried),
      }
      ctx.intercept(interceptors)
      ctx.registerCommand?.('compact', {
        description: 'Compact the conversation now: /compact [what the summary should focus on]',
        run: (args) => runCompactCommand(engine, args),
      })
      return () => {
        compactor = undefined
      }
    },
  })
  return {
    ...definition,
    get compactor() {
      return compactor
    },
    compact(instructions?: string): Promise<CompactionResult> {
      if (!compactor) {
        return Promise.reject(
          new CompactionError(
            'COMPACTION_CONFIG_INVALID',
            'compact(): the compaction plugin is not set up in an agent',
            { path: 'plugin' },
          ),
        )
      }
      return compactor.compact(
        instructions === undefined ? { trigger: 'manual' } : { trigger: 'manual', instructions },
      )
    },
  }
}
