export {
  Agent,
  type AgentOptions,
  createAgent,
  type SendOptions,
  type StoreHandle,
  type ToolAnswerer,
  type ToolQuestion,
  type TurnResult,
} from './agent.js'
export { AgentError, type AgentErrorCode } from './errors.js'

import './events.js'

export {
  type Decided,
  type HostServices,
  type PluginEntry,
  PluginHost,
  type PluginUse,
  usePlugin,
} from './host.js'
export type {
  AgentObserver,
  RetryNotice,
  StreamDelta,
  ToolCallDelta,
  ToolCallFinished,
  ToolCallStarted,
  ToolProgressNotice,
} from './observer.js'
export {
  type AfterToolDecision,
  type BeforeStepDecision,
  type BeforeStepInfo,
  type BeforeToolDecision,
  type Clock,
  type DisplayNotice,
  definePlugin,
  type Interceptors,
  type PluginContext,
  type PluginDefinition,
  type ToolCallInfo,
  type TurnStoppingDecision,
  type TurnStoppingInfo,
} from './plugin.js'
export { backoffDelay, defaultRetryOptions, type RetryOptions, systemClock } from './retry.js'
