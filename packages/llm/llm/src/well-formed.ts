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
  // The latest assistant message with calls, and where its run of tool messages ends: its
  // calls are settled against that run when the run ends. No map per scan (a request scans
  // the whole history, twice): a call is looked up among the run's tool messages.
  let open = -1
  for (let messageIndex = 0; messageIndex <= messages.length; messageIndex++) {
    const message = messages[messageIndex]
    if (message?.role === 'tool') continue
    if (open >= 0) settleCalls(messages, open, messageIndex, out)
    open = -1
    if (message?.role !== 'assistant') continue
    for (const block of message.content) {
      if (block.type === 'tool-call') {
        open = messageIndex
        break
      }
    }
  }
  return out
}

/**
 * Adds to `out` the calls of the assistant message at `at` that no tool message before `end`
 * answers: one entry per distinct id, in the order the ids first appear, named as the last
 * block with that id names it.
 */
function settleCalls(messages: readonly Message[], at: number, end: number, out: UnansweredToolCall[]): void {
  const content = (messages[at] as Extract<Message, { role: 'assistant' }>).content
  for (let i = 0; i < content.length; i++) {
    const block = content[i]!
    if (block.type !== 'tool-call' || answered(messages, at + 1, end, block.id)) continue
    let first = true
    let last: ToolCallBlock = block
    for (let j = 0; j < content.length; j++) {
      const other = content[j]!
      if (other.type !== 'tool-call' || other.id !== block.id) continue
      if (j < i) first = false
      last = other
    }
    if (first) out.push({ messageIndex: at, id: block.id, name: last.name })
  }
}

/** Whether a tool message in `messages[from..end)` answers `id`. */
function answered(messages: readonly Message[], from: number, end: number, id: string): boolean {
  for (let k = from; k < end; k++) if ((messages[k] as { toolCallId?: string }).toolCallId === id) return true
  return false
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
