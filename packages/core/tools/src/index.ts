export {
  type AsideConfig,
  AsideFile,
  type AsideFileSummary,
  DEFAULT_MAX_STORED_BYTES,
  reserveAsideFile,
} from './aside.js'
export {
  type CapOptions,
  type CappedOutput,
  capOutput,
  capsFor,
  DEFAULT_MAX_IMAGE_CHARS,
  DEFAULT_MAX_RESULT_CHARS,
  type OutputCaps,
} from './cap.js'
export {
  DEFAULT_SECRET_NAME_PATTERNS,
  dropReason,
  type EnvironmentPolicy,
  matchesEnvPattern,
  toolEnvironment,
} from './env.js'
export { errorOutput } from './error-output.js'
export {
  ToolError,
  ToolRegistryError,
  type ToolRegistryErrorCode,
  type ToolRuntimeErrorCode,
} from './errors.js'
export { createToolContext, isConcurrencySafe, type ToolContextInit, toolFacts } from './helpers.js'
export { assertToolName, TOOL_NAME_PATTERN, ToolRegistry } from './registry.js'
export {
  DEFAULT_ABORT_GRACE_MS,
  DEFAULT_TOOL_TIMEOUT_MS,
  executeTool,
  formatZodIssues,
  type ParsedToolInput,
  parseToolInput,
  type RunToolCallOptions,
  runToolCall,
  type ToolCallOutcome,
  ToolDeadlineError,
  toolTimeoutMs,
} from './run.js'
export { noServices, type ServiceKey, type ServiceMap, type ServiceView } from './services.js'
export { toToolSpec } from './spec.js'
export { type TruncatedView, toModelText, toWellFormed, truncateText, VISIBLE_NUL } from './text.js'
export {
  defineTool,
  type InputPredicate,
  type InputValue,
  type Tool,
  type ToolAnnotations,
  type ToolCallFacts,
  type ToolContext,
  type ToolOutput,
  type ToolPermissionCheck,
  type ToolProgress,
} from './tool.js'
