import {
  type ImageBlock,
  LlmError,
  type LlmRequest,
  type Message,
  type TextBlock,
  type ToolSpec,
} from '@keel/llm'
import type { ImagePolicy } from './options.js'

/** A message as DeepSeek's chat-completions endpoint takes it. */
export type DeepSeekMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | {
      role: 'assistant'
      content: string
      reasoning_content?: string
      tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>
    }
  | { role: 'tool'; tool_call_id: string; content: string }

/** A tool as DeepSeek takes it. */
export interface DeepSeekTool {
  type: 'function'
  function: { name: string; description: string; parameters: Record<string, unknown> }
}

/** The streaming request body the adapter sends. */
export interface DeepSeekRequestBody {
  model: string
  messages: DeepSeekMessage[]
  stream: true
  stream_options: { include_usage: true }
  tools?: DeepSeekTool[]
  max_tokens?: number
  temperature?: number
  reasoning_effort?: string
  [extra: string]: unknown
}

/** Sent for a tool result whose text is empty: DeepSeek rejects empty tool content. */
export const EMPTY_TOOL_OUTPUT = '(no output)'

function imagePlaceholder(image: ImageBlock): string {
  const kib = Math.max(1, Math.round((image.data.length * 3) / 4 / 1024))
  return `[image omitted: ${image.mediaType}, about ${kib} KiB; this model reads text only]`
}

/** How a refusal names message `i` (built only for one: not for every message of every request). */
function describe(message: Message, i: number): string {
  return message.role === 'tool'
    ? `message ${i} (tool result of ${message.toolName})`
    : `message ${i} (${message.role})`
}

/** The text of `blocks` (message `i`'s), joined by a blank line. */
function renderBlocks(
  blocks: ReadonlyArray<TextBlock | ImageBlock>,
  images: ImagePolicy,
  message: Message,
  i: number,
): string {
  // the common case, one text block: its text, no parts array and no join
  if (blocks.length === 1 && blocks[0]!.type === 'text') return blocks[0]!.text
  const parts: string[] = []
  for (const block of blocks) {
    if (block.type === 'text') {
      parts.push(block.text)
    } else if (images === 'reject') {
      throw new LlmError(
        'invalid-request',
        `${describe(message, i)} holds an image (${block.mediaType}) but DeepSeek chat models read text only; ` +
          "drop the image or build the adapter with images: 'placeholder'.",
      )
    } else {
      parts.push(imagePlaceholder(block))
    }
  }
  return parts.join('\n\n')
}

/**
 * Maps our messages to DeepSeek's: developer → system; text blocks of system, user and tool
 * messages joined by a blank line, assistant text joined as streamed; assistant `content`
 * is `""` rather than null; tool results carry `tool_call_id` and `(no output)` when empty.
 * `reasoning_content` is sent back only for assistant messages after the last user message
 * (the tool-call chain of the current turn), never for earlier turns.
 */
export function toDeepSeekMessages(
  messages: readonly Message[],
  images: ImagePolicy = 'placeholder',
): DeepSeekMessage[] {
  let lastUser = -1
  messages.forEach((message, i) => {
    if (message.role === 'user') lastUser = i
  })
  return messages.map((message, i): DeepSeekMessage => {
    switch (message.role) {
      case 'system':
      case 'developer':
        return {
          role: 'system',
          content: renderBlocks(message.content, images, message, i),
        }
      case 'user':
        return { role: 'user', content: renderBlocks(message.content, images, message, i) }
      case 'tool': {
        const content = renderBlocks(message.content, images, message, i)
        return {
          role: 'tool',
          tool_call_id: message.toolCallId,
          content: content === '' ? EMPTY_TOOL_OUTPUT : content,
        }
      }
    }
    let text = ''
    let reasoning = ''
    const calls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> = []
    for (const block of message.content) {
      if (block.type === 'text') text += block.text
      else if (block.type === 'reasoning') reasoning += block.text
      else
        calls.push({
          id: block.id,
          type: 'function',
          function: { name: block.name, arguments: block.arguments },
        })
    }
    const mapped: Extract<DeepSeekMessage, { role: 'assistant' }> = { role: 'assistant', content: text }
    if (i > lastUser && reasoning !== '') mapped.reasoning_content = reasoning
    if (calls.length > 0) mapped.tool_calls = calls
    return mapped
  })
}

/** Maps tool specs to DeepSeek's `tools` array. */
export function toDeepSeekTools(tools: readonly ToolSpec[]): DeepSeekTool[] {
  return tools.map((tool) => ({
    type: 'function',
    function: { name: tool.name, description: tool.description, parameters: tool.parameters },
  }))
}

/** The full streaming request body for `request`. */
export function buildRequestBody(
  request: LlmRequest,
  defaults: { model: string; images: ImagePolicy; extraBody?: Record<string, unknown> },
): DeepSeekRequestBody {
  if (request.maxTokens !== undefined && !(Number.isInteger(request.maxTokens) && request.maxTokens > 0)) {
    throw new LlmError('invalid-request', `maxTokens must be a positive integer, got ${request.maxTokens}.`)
  }
  const body: DeepSeekRequestBody = {
    ...defaults.extraBody,
    model: request.model ?? defaults.model,
    messages: toDeepSeekMessages(request.messages, defaults.images),
    stream: true,
    stream_options: { include_usage: true },
  }
  if (request.tools && request.tools.length > 0) body.tools = toDeepSeekTools(request.tools)
  if (request.maxTokens !== undefined) body.max_tokens = request.maxTokens
  if (request.temperature !== undefined) body.temperature = request.temperature
  if (request.reasoningEffort !== undefined) body.reasoning_effort = request.reasoningEffort
  return body
}
