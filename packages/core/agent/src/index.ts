export { Agent, createAgent } from './agent.js'
export { AgentError, type AgentErrorCode } from './errors.js'
export type {
  AgentLogger,
  AgentOptions,
  SendOptions,
  StoreHandle,
  ToolAnswerer,
  ToolQuestion,
  TurnResult,
} from './options.js'

import './events.js'

export type { InboxTarget } from './events.js'
export {
  type BeforeToolVerdict,
  type Decided,
  type HostServices,
  type PluginEntry,
  PluginHost,
  type PluginUse,
  type RegisteredCommand,
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
  type DisplayNotice,
  definePlugin,
  type Interceptors,
  MAX_INPUT_REWRITES,
  type ModelErrorDecision,
  type ModelErrorInfo,
  type PluginCommand,
  type PluginContext,
  type PluginDefinition,
  type PluginHostView,
  type PromptSubmitDecision,
  type PromptSubmitInfo,
  type SessionEndInfo,
  type SessionStartDecision,
  type SessionStartInfo,
  type ToolCallInfo,
  type TurnStoppingDecision,
  type TurnStoppingInfo,
} from './plugin.js'
export { backoffDelay, defaultRetryOptions, type RetryOptions, systemClock } from './retry.js'
