import './events.js'

export { type HooksCommandContext, hooksCommand } from './command.js'
export {
  DEFAULT_HOOK_SOURCES,
  HOOK_POINTS,
  HOOK_SOURCES,
  type HookDialect,
  type HookHandler,
  type HookLocations,
  type HookPoint,
  type HookSourceId,
  hookSettingsSchema,
  type LoadedHooks,
  type LoadHooksOptions,
  loadHooks,
  parseHookSettings,
} from './config.js'
export {
  defaultTimeoutSeconds,
  type HandlerResult,
  HookEngine,
  type HookEngineOptions,
  type HookInvocation,
} from './engine.js'
export { HookError, type HookErrorCode } from './errors.js'
export { HOOK_STDERR_SUMMARY_CHARS, type HookDecisionLabel, type HookPointName } from './events.js'
export { type HookLifecycleInterceptors, hookLifecycleInterceptors } from './lifecycle.js'
export {
  fromHookInput,
  hookToolName,
  TOOL_MAPPINGS,
  type ToolMapping,
  type ToolResultText,
  toHookInput,
  toHookResponse,
} from './mapping.js'
export { compileMatcher, type Matcher } from './matcher.js'
export {
  type HandlerOutcome,
  interpretRun,
  MAX_HOOK_TEXT,
  type PermissionVerdict,
} from './outcome.js'
export { type HookPermissionAnswer, hookApprovalAnswerer, hookPermission } from './permission.js'
export { type HooksConfig, hooksConfigSchema, hooksPlugin, updatedInputDecision } from './plugin.js'
export {
  type HookReport,
  type HookToolCall,
  type PostToolUseResult,
  type PreCompactResult,
  type PreToolUseResult,
  type PromptSubmitResult,
  postToolUse,
  preCompact,
  preToolUse,
  type StopResult,
  sessionEnd,
  sessionStart,
  stop,
  userPromptSubmit,
} from './points.js'
export {
  describeProjectHooks,
  isProjectHandler,
  PROJECT_HOOK_SOURCES,
  type ProjectHooksAnswer,
  type ProjectHooksGate,
  projectHooksDigest,
  projectHooksGate,
  projectHooksProjection,
  projectHooksRun,
  projectHooksState,
} from './project-trust.js'
export { type CommandRun, type RunCommandOptions, runCommand } from './run.js'
export { HookSession } from './state.js'
