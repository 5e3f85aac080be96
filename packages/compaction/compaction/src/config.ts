import { boundIssues, KeelError } from '@keel/base'
import { z } from 'zod'

/** The context window assumed for a model nobody configured: a conservative 128K. */
export const DEFAULT_CONTEXT_WINDOW = 128_000

/**
 * How compaction behaves; plain JSON, so a preset can hold it. Every field has a default.
 * Sizes are tokens as {@link measureSurface} counts them.
 */
export const compactionConfigSchema = z
  .strictObject({
    /**
     * Model id for summary calls; default the model the agent runs (`ctx.model()`), which
     * also lets the summary request hit the provider's prefix cache. The window is always
     * the agent's model's.
     */
    model: z.string().min(1).optional(),
    /**
     * The window when the agent knows none for its model (no selection, no `contextWindows`
     * option): it wins over the adapter's capability table, which guesses for unknown ids.
     * Default: the adapter's figure, else 128,000.
     */
    contextWindow: z.number().int().positive().optional(),
    /** Context windows per model id; an entry for the agent's model wins over everything else. */
    contextWindows: z.record(z.string(), z.number().int().positive()).default({}),
    /** Compact automatically before a step once the surface exceeds this fraction of the window. Default 0.8. */
    threshold: z.number().gt(0).lte(1).default(0.8),
    /**
     * Pruning alone is enough when it brings the surface to this fraction of the window;
     * otherwise a summary follows. Default 0.5. Not above `threshold`.
     */
    target: z.number().gt(0).lte(1).default(0.5),
    /**
     * The recent tail kept verbatim (never pruned or summarized), as a fraction of the
     * window, capped at half the surface. Default 0.15. Below `target`.
     */
    keepRecent: z.number().gte(0).lt(1).default(0.15),
    /** Tool outputs smaller than this many tokens are never pruned. Default 200. */
    pruneMinTokens: z.number().int().positive().default(200),
    /** Automatic (and overflow) summaries per turn, at most. Default 3. */
    maxPerTurn: z.number().int().positive().default(3),
    /**
     * After this many automatic summaries in a row failed or left the context at or above
     * the threshold (across turns), automatic summarizing is off until a manual compaction
     * succeeds; pruning still runs. Default 3.
     */
    maxSummaryFailures: z.number().int().positive().default(3),
    /** Output cap of the summary call, in tokens. Default 4,096. */
    summaryMaxTokens: z.number().int().positive().default(4_096),
    /** Tools whose successful calls mark a file as read or modified, and their path argument. */
    fileTools: z
      .strictObject({
        read: z.array(z.string().min(1)).default(['read_file']),
        modify: z.array(z.string().min(1)).default(['write_file', 'edit_file']),
        pathArgument: z.string().min(1).default('path'),
      })
      .default({ read: ['read_file'], modify: ['write_file', 'edit_file'], pathArgument: 'path' }),
  })
  .refine((c) => c.target <= c.threshold, { message: 'target must not be above threshold', path: ['target'] })
  .refine((c) => c.keepRecent < c.target, {
    message: 'keepRecent must be below target',
    path: ['keepRecent'],
  })

/** The compaction config as a preset writes it (every field optional). */
export type CompactionConfigInput = z.input<typeof compactionConfigSchema>
/** The validated compaction config, defaults applied. */
export type CompactionConfig = z.output<typeof compactionConfigSchema>

/** Every way compaction refuses or fails. */
export type CompactionErrorCode =
  /** The config failed its schema (details.path names the field). */
  | 'COMPACTION_CONFIG_INVALID'
  /** Another compaction of this session is running in this process. */
  | 'COMPACTION_BUSY'
  /** The summary call failed (the model error is the cause; its code is in the message). */
  | 'COMPACTION_SUMMARY_FAILED'
  /** The model answered the summary request with no text. */
  | 'COMPACTION_SUMMARY_EMPTY'
  /** The summary message would be no smaller than the range it replaces. */
  | 'COMPACTION_SUMMARY_NOT_SMALLER'
  /** The range changed on the surface while the summary was being written. */
  | 'COMPACTION_SURFACE_CHANGED'
  /** The compaction was cancelled (Ctrl-C, the turn aborted) before the summary was applied; nothing was. */
  | 'COMPACTION_ABORTED'

/** A refused or failed compaction; `details` names the field, seqs or model error involved. */
export class CompactionError extends KeelError<CompactionErrorCode> {}

/** Validates a config; throws `COMPACTION_CONFIG_INVALID` naming the first bad field. */
export function parseCompactionConfig(input: unknown): CompactionConfig {
  const result = compactionConfigSchema.safeParse(input ?? {})
  if (result.success) return result.data
  const { issues } = boundIssues(result.error.issues)
  const first = boundIssues(result.error.issues, 'config').issues[0]!
  throw new CompactionError('COMPACTION_CONFIG_INVALID', `compaction ${first.path}: ${first.message}`, {
    path: first.path,
    issues,
  })
}
