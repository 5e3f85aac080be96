// The model's messages. Their validators (`textBlockSchema`, `userMessageSchema`, …) are
// generated from these declarations into schemas.generated.ts by `pnpm gen-persistence-catalog`:
// the session's events persist these types, so the declaration here is the only place they
// are written.
import type { Brand } from '@keel/base'

/**
 * The id the model gave one tool call; pairs the call with its result.
 * @minLength 1
 */
export type ToolCallId = Brand<string, 'ToolCallId'>

/** Plain text written by a person or by the model. */
export interface TextBlock {
  type: 'text'
  text: string
}

/**
 * The model's reasoning ("thinking") text, streamed before its answer. DeepSeek calls it
 * `reasoning_content`. Kept in the log for audit and sent back to the model only where
 * its API expects it (inside a tool-call chain).
 */
export interface ReasoningBlock {
  type: 'reasoning'
  text: string
}

/**
 * One tool call the model asked for. `arguments` is the raw JSON text exactly as the
 * model produced it, even when it does not parse: the tool runtime reports bad
 * arguments back to the model instead of rewriting them.
 */
export interface ToolCallBlock {
  type: 'tool-call'
  id: ToolCallId
  /** @minLength 1 */
  name: string
  arguments: string
}

/** The media types an {@link ImageBlock} may carry. */
export type ImageMediaType = 'image/png' | 'image/jpeg' | 'image/gif' | 'image/webp'

/** An inline image, base64-encoded without a data-URL prefix. */
export interface ImageBlock {
  type: 'image'
  mediaType: ImageMediaType
  data: string
}

/** Any block a message may hold. Each message role narrows which ones it allows. */
export type ContentBlock = TextBlock | ReasoningBlock | ToolCallBlock | ImageBlock

/** Instructions from the harness operator; first in the model's context. */
export interface SystemMessage {
  role: 'system'
  content: TextBlock[]
}

/**
 * Instructions the harness adds during a session (reminders, runtime notices). Sent to
 * OpenAI-compatible endpoints as a `system` message when they lack a developer role.
 */
export interface DeveloperMessage {
  role: 'developer'
  content: TextBlock[]
}

/** What the user (or a scheduled reminder on the user's behalf) says. */
export interface UserMessage {
  role: 'user'
  content: Array<TextBlock | ImageBlock>
}

/** One assembled model answer: text, reasoning and tool calls in the order streamed. */
export interface AssistantMessage {
  role: 'assistant'
  content: Array<TextBlock | ReasoningBlock | ToolCallBlock>
}

/**
 * The outcome of one tool call, sent back to the model. `isError` marks a failed call
 * (bad arguments, denied, thrown); the text then says what the model can do about it.
 */
export interface ToolResultMessage {
  role: 'tool'
  toolCallId: ToolCallId
  /** @minLength 1 */
  toolName: string
  content: Array<TextBlock | ImageBlock>
  isError?: true
}

/** Any message of the model's context. */
export type Message = SystemMessage | DeveloperMessage | UserMessage | AssistantMessage | ToolResultMessage

/**
 * Token accounting for one model call as the provider reported it. `cacheHitTokens` and
 * `cacheMissTokens` split `inputTokens` by prompt-cache outcome when the provider says.
 */
export interface TokenUsage {
  /** @integer @minimum 0 */
  inputTokens: number
  /** @integer @minimum 0 */
  outputTokens: number
  /** @integer @minimum 0 */
  totalTokens: number
  /** @integer @minimum 0 */
  cacheHitTokens?: number
  /** @integer @minimum 0 */
  cacheMissTokens?: number
  /** @integer @minimum 0 */
  reasoningTokens?: number
}

/** Why the model stopped producing output. */
export type FinishReason =
  | 'stop'
  | 'tool-calls'
  | 'length'
  | 'content-filter'
  | 'insufficient-resources'
  | 'other'

/** The concatenated text blocks of a message, for display and summaries. */
export function messageText(message: Message): string {
  let out = ''
  for (const block of message.content) if (block.type === 'text') out += block.text
  return out
}

/** A one-block text message body. */
export function text(value: string): TextBlock {
  return { type: 'text', text: value }
}
