import type { Message, ToolCallId } from './messages.js'
import { errorResultText } from './tool-error.js'

/** An assistant tool call that no tool message answers. */
export interface UnansweredToolCall {
  /** Position of the assistant message in the list. */
  readonly messageIndex: number
  readonly id: string
  readonly name: string
}

/**
 * The tool calls of `messages` that have no answer: every assistant tool call must be
 * followed, before the next non-tool message, by a tool message with its id (DeepSeek and
 * OpenAI answer HTTP 400 otherwise). Empty when the list is well-formed.
 */
export function findUnansweredToolCalls(messages: readonly Message[]): UnansweredToolCall[] {
  const out: UnansweredToolCall[] = []
  let open = new Map<string, UnansweredToolCall>()
  const settle = (): void => {
    for (const call of open.values()) out.push(call)
    open = new Map()
  }
  messages.forEach((message, messageIndex) => {
    if (message.role === 'tool') {
      open.delete(message.toolCallId)
      return
    }
    settle()
    if (message.role !== 'assistant') return
    for (const block of message.content) {
      if (block.type === 'tool-call') open.set(block.id, { messageIndex, id: block.id, name: block.name })
    }
  })
  settle()
  return out
}

/**
 * `messages` with a tool message inserted for every unanswered call, right after the tool
 * messages that follow its assistant message (the order providers require), carrying
 * `Error [<code>]: <text>`. Returns the list itself when nothing is missing. For histories
 * written before calls were always answered (a log whose turn closed with a call open).
 */
export function withAnsweredToolCalls(
  messages: readonly Message[],
  answer: { errorCode: string; text(call: UnansweredToolCall): string },
): readonly Message[] {
  const missing = findUnansweredToolCalls(messages)
  if (missing.length === 0) return messages
  const out: Message[] = []
  const pending: UnansweredToolCall[] = []
  const settle = (): void => {
    for (const call of pending.splice(0)) {
      out.push({
        role: 'tool',
        toolCallId: call.id as ToolCallId,
        toolName: call.name,
        content: [{ type: 'text', text: errorResultText(answer.errorCode, answer.text(call)) }],
        isError: true,
      })
    }
  }
  messages.forEach((message, index) => {
    if (message.role !== 'tool') settle()
    out.push(message)
    for (const call of missing) if (call.messageIndex === index) pending.push(call)
  })
  settle()
  return out
}
