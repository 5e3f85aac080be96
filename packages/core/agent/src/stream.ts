import type { AssistantMessage, ReasoningBlock, TextBlock, ToolCallBlock, ToolCallId } from '@keel/llm'

interface PendingToolCall {
  id?: string
  name?: string
  arguments: string
  /** Position of the call's block among the streamed blocks. */
  order: number
}

type Piece = { kind: 'text' | 'reasoning'; text: string } | { kind: 'tool'; index: number }

/**
 * Rebuilds what a stream has delivered so far, so an aborted stream can keep its prefix.
 * Consecutive deltas of one kind form one block; blocks keep their streamed order.
 */
export class PartialMessage {
  readonly #pieces: Piece[] = []
  readonly #calls = new Map<number, PendingToolCall>()
  #highestIndex = -1

  text(delta: string): void {
    this.#append('text', delta)
  }

  reasoning(delta: string): void {
    this.#append('reasoning', delta)
  }

  toolCall(index: number, id: string | undefined, name: string | undefined, argumentsDelta: string): void {
    let call = this.#calls.get(index)
    if (!call) {
      call = { arguments: '', order: this.#pieces.length }
      this.#calls.set(index, call)
      this.#pieces.push({ kind: 'tool', index })
    }
    if (id) call.id = id
    if (name) call.name = name
    call.arguments += argumentsDelta
    if (index > this.#highestIndex) this.#highestIndex = index
  }

  /**
   * The delivered prefix as a message. A tool call counts as complete only when a later
   * call has started streaming (the provider never goes back to an earlier index); the
   * last call, which may have been cut anywhere, is dropped, as is any call lacking an id
   * or a name. Empty text and reasoning blocks are left out; runs of one kind left side by
   * side by a dropped call are joined.
   */
  prefix(): AssistantMessage {
    const content: Array<TextBlock | ReasoningBlock | ToolCallBlock> = []
    for (const piece of this.#pieces) {
      if (piece.kind === 'tool') {
        const call = this.#calls.get(piece.index)!
        if (piece.index < this.#highestIndex && call.id && call.name) {
          content.push({
            type: 'tool-call',
            id: call.id as ToolCallId,
            name: call.name,
            arguments: call.arguments,
          })
        }
      } else if (piece.text !== '') {
        // a dropped call may leave two runs of one kind side by side: join them
        const last = content[content.length - 1]
        if (last && last.type === piece.kind)
          content[content.length - 1] = { type: piece.kind, text: last.text + piece.text }
        else content.push({ type: piece.kind, text: piece.text })
      }
    }
    return { role: 'assistant', content }
  }

  #append(kind: 'text' | 'reasoning', delta: string): void {
    if (delta === '') return
    const last = this.#pieces[this.#pieces.length - 1]
    if (last && last.kind === kind) last.text += delta
    else this.#pieces.push({ kind, text: delta })
  }
}
