export type { ServiceKey, ServiceMap, ServiceView } from '@keel/tools'
export { Agent, createAgent } from './agent.js'
export type { ChildAgentOptions, ChildSessions } from './child-sessions.js'
export type { CommandSummary, RegisteredCommand } from './commands.js'
export { MAX_COMMAND_TEXT } from './commands.js'
export { type DirectToolOptions, type DirectToolResult, MAX_SHARED_CHARS, sharedText } from './direct-tool.js'
export { AgentError, type AgentErrorCode } from './errors.js'
export {
  approvalAnswerSourceSchema,
  approvalOutcomeSchema,
  sessionRuleSchema,
} from './events.generated.js'
export type {
  ApprovalAnswerSource,
  ApprovalOutcome,
  CommandOutcome,
  CommandSource,
  OfferedTool,
  SessionRule,
} from './events.js'
export {
  ACTIVE_MODEL_KEY,
  type ActiveModelService,
  type ModelChoice,
  type ModelInfo,
  type ModelRoute,
  type RouteSource,
} from './model-route.js'
export type { AgentLogger, AgentOptions, SendOptions, StoreHandle, TurnResult } from './options.js'
export {
  type ApprovalAnswer,
  type ApprovalAnswerer,
  type ApprovalQuestion,
  type AskContext,
  askAbout,
  defaultRule,
  describeRule,
  ruleCovers,
  type Settlement,
  sessionRulesProjection,
  settle,
  verdict,
} from './permission.js'
export {
  type RequestLogState,
  requestHeaderOf,
  requestLogProjection,
  systemDigestOf,
  toolsDigestOf,
} from './request-record.js'
export { orderByServices, type ServiceNeeds } from './services.js'
export {
  describeChange,
  diffOffered,
  offeredToolsProjection,
  type ToolListChange,
  type ToolSet,
  toolDigest,
} from './tool-sets.js'

import './events.js'

export type { InboxTarget } from './events.js'
export {
  type AgentFacilities,
  type BeforeToolVerdict,
  type Decided,
  type PluginEntry,
  PluginHost,
  type PluginUse,
  type Reinput,
  usePlugin,
} from './host.js'
export {
  applySplice,
  enqueueMessage,
  type InboxEdit,
  type InboxSplice,
  inboxProjection,
  normalizeSplice,
  pendingMessages,
  spliceInbox,
  spliceProblem,
  takeFromInbox,
  withdrawMessage,
} from './inbox.js'
export type {
  AgentNotice,
  AgentObserver,
  RetryNotice,
  StreamDelta,
  ToolCallDelta,
  ToolCallFinished,
  ToolCallStarted,
  ToolProgressNotice,
} from './observer.js'
export {
  type AddedContext,
  type AfterToolDecision,
  type BeforeCompactionDecision,
  type BeforeCompactionInfo,
  type BeforeStepDecision,
  type BeforeStepInfo,
  type BeforeToolDecision,
  type Clock,
  type CommandRunInfo,
  type DisplayNotice,
  definePlugin,
  type Interceptors,
  MAX_INPUT_REWRITES,
  type ModelErrorDecision,
  type ModelErrorInfo,
  type ModelRetryPolicy,
  type PluginCommand,
  type PluginContext,
  type PluginDefinition,
  type PluginTriggers,
  type PromptSubmitDecision,
  type PromptSubmitInfo,
  type SessionEndInfo,
  type SessionStartDecision,
  type SessionStartInfo,
  type ToolCallInfo,
  type TurnStoppingDecision,
  type TurnStoppingInfo,
} from './plugin.js'
export { backoffDelay, defaultRetryOptions, type RetryOptions, sleep, systemClock } from './retry.js'
