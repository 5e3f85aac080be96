export type {
  LlmAdapter,
  LlmChunk,
  LlmErrorKind,
  LlmRequest,
  ModelCapabilities,
  StreamRecord,
  ToolSpec,
} from './adapter.js'
export { LlmError } from './adapter.js'
export { type ContentDelta, MessageAssembly } from './assembly.js'
export {
  type AssistantMessage,
  type ContentBlock,
  type DeveloperMessage,
  type FinishReason,
  type ImageBlock,
  type ImageMediaType,
  type Message,
  messageText,
  type ReasoningBlock,
  type SystemMessage,
  type TextBlock,
  type TokenUsage,
  type ToolCallBlock,
  type ToolCallId,
  type ToolResultMessage,
  text,
  type UserMessage,
} from './messages.js'
export {
  callCost,
  isPeak,
  type ModelPrice,
  modelPriceSchema,
  type PriceTable,
  tokenRatesSchema,
  utcWindowSchema,
} from './prices.js'
// The validators of the types above, generated from their declarations (pnpm gen-persistence-catalog).
export * from './schemas.generated.js'
export { errorResultText } from './tool-error.js'
export { findUnansweredToolCalls, type UnansweredToolCall, withAnsweredToolCalls } from './well-formed.js'
