import type { Message, ToolCallBlock, ToolCallId } from './messages.js'
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
  // The calls of the latest assistant message not answered yet (allocated only for one that
  // has calls: a request scans the whole history, twice).
  let open: Map<string, ToolCallBlock> | undefined
  let openIndex = -1
  const settle = (): void => {
    if (open !== undefined)
      for (const block of open.values()) out.push({ messageIndex: openIndex, id: block.id, name: block.name })
    open = undefined
  }
  for (let messageIndex = 0; messageIndex < messages.length; messageIndex++) {
    const message = messages[messageIndex]!
    if (message.role === 'tool') {
      open?.delete(message.toolCallId)
      continue
    }
    settle()
    if (message.role !== 'assistant') continue
    for (const block of message.content) {
      if (block.type !== 'tool-call') continue
      open ??= new Map()
      openIndex = messageIndex
      open.set(block.id, block)
    }
  }
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
