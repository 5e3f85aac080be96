export type {
  LlmAdapter,
  LlmChunk,
  LlmErrorKind,
  LlmRequest,
  ModelCapabilities,
  StreamRecord,
  ToolSpec,
} from './adapter.js'
export { LlmError, streamRecordSchema } from './adapter.js'
export { type ContentDelta, MessageAssembly } from './assembly.js'
export {
  type AssistantMessage,
  assistantMessageSchema,
  type ContentBlock,
  type DeveloperMessage,
  developerMessageSchema,
  type FinishReason,
  finishReasonSchema,
  type ImageBlock,
  type ImageMediaType,
  imageBlockSchema,
  type Message,
  messageText,
  type ReasoningBlock,
  reasoningBlockSchema,
  type SystemMessage,
  systemMessageSchema,
  type TextBlock,
  type TokenUsage,
  type ToolCallBlock,
  type ToolCallId,
  type ToolResultMessage,
  text,
  textBlockSchema,
  tokenUsageSchema,
  toolCallBlockSchema,
  toolCallIdSchema,
  toolResultMessageSchema,
  type UserMessage,
  userMessageSchema,
} from './messages.js'
export { errorResultText } from './tool-error.js'
export { findUnansweredToolCalls, type UnansweredToolCall, withAnsweredToolCalls } from './well-formed.js'
