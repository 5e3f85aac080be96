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
  DEFAULT_MAX_RESULT_CHARS,
  executeTool,
  formatZodIssues,
  type ParsedToolInput,
  parseToolInput,
  type RunToolCallOptions,
  runToolCall,
  type ToolCallOutcome,
  type TruncatedView,
  toWellFormed,
  truncateText,
} from './run.js'
export { toToolSpec } from './spec.js'
export {
  defineTool,
  type InputPredicate,
  type Tool,
  type ToolAnnotations,
  type ToolCallFacts,
  type ToolContext,
  type ToolOutput,
  type ToolPermissionCheck,
  type ToolProgress,
} from './tool.js'
