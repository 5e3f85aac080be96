export { createDeepSeekAdapter, DeepSeekAdapter } from './adapter.js'
export { mapFinishReason, mapUsage, type WireUsage } from './assembly.js'
export {
  defaultModelCapabilities,
  knownModelCapabilities,
  type ModelCapabilities,
  modelCapabilitiesSchema,
  resolveCapabilities,
} from './capabilities.js'
export { classifyError, retryAfterMs } from './errors.js'
export {
  buildRequestBody,
  type DeepSeekMessage,
  type DeepSeekRequestBody,
  type DeepSeekTool,
  EMPTY_TOOL_OUTPUT,
  toDeepSeekMessages,
  toDeepSeekTools,
} from './mapping.js'
export {
  DEFAULT_BASE_URL,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MODEL,
  DEFAULT_TIMEOUT_MS,
  DeepSeekConfigError,
  type DeepSeekConfigErrorCode,
  type DeepSeekOptions,
  deepSeekOptionsSchema,
  type ImagePolicy,
  isLoopback,
  LOCAL_PLACEHOLDER_KEY,
} from './options.js'
export { deepSeekPrices } from './prices.js'
export { StreamIdleTimeoutError } from './sse.js'
