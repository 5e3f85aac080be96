import { LlmError } from './adapter.js'
import type { AssistantMessage, ReasoningBlock, TextBlock, ToolCallBlock, ToolCallId } from './messages.js'

interface PendingCall {
  type: 'call'
  index: number
  id?: string
  name?: string
  arguments: string
}

type Piece = TextBlock | ReasoningBlock | PendingCall

/** A streamed delta as {@link MessageAssembly} takes it (the content chunks of an `LlmChunk`). */
export type ContentDelta =
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string }
  | { type: 'tool-call-delta'; index: number; id?: string; name?: string; argumentsDelta: string }

/**
 * The one partial-message assembly: folds streamed deltas into an assistant message.
 * Consecutive text (or reasoning) deltas form one block; a tool call takes its place at its
 * first fragment and later fragments for its index append to its raw arguments. Adapters
 * build their final message and `LlmError.partial` with it; the agent builds the prefix a
 * user saw before an abort with it.
 */
export class MessageAssembly {
  readonly #pieces: Piece[] = []
  readonly #calls = new Map<number, PendingCall>()
  #highestIndex = -1
  /** Set once the stream's finish arrived: every call is then complete. */
  finished = false

  accept(delta: ContentDelta): void {
    if (delta.type === 'text-delta') this.#appendText('text', delta.text)
    else if (delta.type === 'reasoning-delta') this.#appendText('reasoning', delta.text)
    else {
      let call = this.#calls.get(delta.index)
      if (!call) {
        call = { type: 'call', index: delta.index, arguments: '' }
        this.#calls.set(delta.index, call)
        this.#pieces.push(call)
      }
      call.id ??= delta.id || undefined
      call.name ??= delta.name || undefined
      call.arguments += delta.argumentsDelta
      if (delta.index > this.#highestIndex) this.#highestIndex = delta.index
    }
  }

  /** True when anything (text, reasoning or a tool call fragment) was delivered. */
  get delivered(): boolean {
    return this.#pieces.length > 0
  }

  /** The complete message. Throws `malformed-response` when a tool call never got an id or a name. */
  message(): AssistantMessage {
    const content: AssistantMessage['content'] = []
    for (const piece of this.#pieces) {
      if (piece.type !== 'call') {
        content.push({ ...piece })
        continue
      }
      if (!piece.id || !piece.name) {
        throw new LlmError(
          'malformed-response',
          `Tool call #${piece.index} of the stream never received ${piece.id ? 'a name' : 'an id'}.`,
          { partial: this.partial() },
        )
      }
      content.push(block(piece, piece.id, piece.name))
    }
    return { role: 'assistant', content }
  }

  /**
   * What was delivered so far, for an interrupted stream: text and reasoning, and the tool
   * calls known to be complete (a later index started, or the finish arrived). The last
   * call, possibly cut anywhere, and calls without id or name are left out; runs of one
   * kind left side by side by a dropped call are joined.
   */
  partial(): AssistantMessage {
    const content: AssistantMessage['content'] = []
    for (const piece of this.#pieces) {
      if (piece.type === 'call') {
        if (piece.id && piece.name && (this.finished || piece.index < this.#highestIndex)) {
          content.push(block(piece, piece.id, piece.name))
        }
        continue
      }
      const last = content.at(-1)
      if (last && last.type === piece.type)
        content[content.length - 1] = { type: piece.type, text: last.text + piece.text }
      else content.push({ ...piece })
    }
    return { role: 'assistant', content }
  }

  #appendText(type: 'text' | 'reasoning', text: string): void {
    if (text === '') return
    const last = this.#pieces.at(-1)
    if (last && last.type === type) last.text += text
    else this.#pieces.push({ type, text })
  }
}

function block(call: PendingCall, id: string, name: string): ToolCallBlock {
  return { type: 'tool-call', id: id as ToolCallId, name, arguments: call.arguments }
}
