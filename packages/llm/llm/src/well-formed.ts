import type { Message } from './messages.js'

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
