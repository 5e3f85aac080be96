import './events.js'
import './services.js'

export { type ActiveModel, type Budget, budgetOf } from './budget.js'
export {
  type BeforeCompactionDecision,
  type BeforeCompactionInfo,
  type CompactionNotice,
  type CompactionResult,
  Compactor,
  type CompactorOptions,
  type CompactRequest,
} from './compactor.js'
export {
  type CompactionConfig,
  type CompactionConfigInput,
  CompactionError,
  type CompactionErrorCode,
  compactionConfigSchema,
  DEFAULT_CONTEXT_WINDOW,
  parseCompactionConfig,
} from './config.js'
export { type CutCandidate, planCuts } from './cut.js'
export { compactionTriggerSchema } from './events.generated.js'
export type { CompactionRange, CompactionTrigger, TokenSource, WindowSource } from './events.js'
export { type CompactionLogState, compactionLogProjection } from './guard.js'
export {
  type AfterCompaction,
  type CompactionPluginOptions,
  compactionPlugin,
  DISPLAY_KINDS,
  describeResult,
  recoverFromOverflow,
  runCompactCommand,
} from './plugin.js'
export { placeholderFor, protectedTailStart } from './prune.js'
export type { CompactionService } from './services.js'
export { MIN_SUMMARY_RANGE_TOKENS, SUMMARY_SOURCE, summaryInstruction } from './summarize.js'
export { callSummary, type SummaryCall, type SummaryRequest } from './summary-call.js'
export {
  CHARS_PER_TOKEN,
  estimateMessageTokens,
  estimateSurface,
  estimateTextTokens,
  formatCount,
  IMAGE_TOKENS,
  MESSAGE_OVERHEAD_TOKENS,
  type MeterState,
  measureSurface,
  meterProjection,
  type SurfaceSize,
} from './tokens.js'
export {
  defaultFileTools,
  type FileState,
  type FileToolNames,
  fileActivityProjection,
  readWorkingState,
  renderWorkingState,
  type WorkingState,
  type WorkingStateSources,
} from './working-state.js'
