import type { Message } from '@keel/llm'
import { SessionError } from './errors.js'
import type { SessionSeq, SurfaceEventType } from './types.js'

/** The event types whose events are surface nodes. */
export const SURFACE_TYPES: ReadonlySet<string> = new Set<SurfaceEventType>([
  'system/message',
  'developer/message',
  'user/message',
  'assistant/message',
  'tool/result',
])

/** Whether `sources` starts with exactly the seqs of `nodes`, in order (how a compaction cites them). */
function citesInOrder(sources: readonly number[] | undefined, nodes: readonly SurfaceNode[]): boolean {
  if (!sources || sources.length < nodes.length) return false
  for (let i = 0; i < nodes.length; i++) if (sources[i] !== nodes[i]!.seq) return false
  return true
}

/** One node of the surface: the message of the event at `seq`. */
export interface SurfaceNode {
  readonly seq: number
  readonly message: Message
  prev: SurfaceNode | null
  next: SurfaceNode | null
}

/** A replace as {@link Surface.collectReplace} reads it: the event's envelope fields. */
export interface SurfaceReplace {
  readonly type: string
  readonly seq: number
  readonly surfaceOp: { readonly startSeq: number; readonly endSeq: number }
  readonly sourceEventSeqs?: readonly number[] | undefined
}

/**
 * The surface, maintained incrementally: a linked list indexed by seq, so an append is
 * O(1) and a replace O(range), plus the message array handed to the model, kept in step
 * on append and rebuilt once after a replace. Validation ({@link collectReplace}) is
 * separate from mutation ({@link append}, {@link replace}), which never throws.
 */
export class Surface {
  /**
   * The current node of each seq from `#denseFrom` on, null where there is none. Dense and
   * indexed by seq (seqs only grow), which is cheaper to grow than a map on the append hot
   * path. Nodes restored from a checkpoint (seqs before `#denseFrom`) are in `#restored`.
   */
  readonly #bySeq: (SurfaceNode | null)[] = []
  #denseFrom = 0
  readonly #restored = new Map<number, SurfaceNode>()
  #head: SurfaceNode | null = null
  #tail: SurfaceNode | null = null
  #messages: Message[] = []
  #messagesValid = true

  /** The first node, or null on a blank surface. */
  get head(): SurfaceNode | null {
    return this.#head
  }

  has(seq: number): boolean {
    return this.#node(seq) !== null
  }

  /** The messages of the surface, in order. A live view, valid until the next change. */
  messages(): readonly Message[] {
    if (!this.#messagesValid) {
      const messages: Message[] = []
      for (let node = this.#head; node; node = node.next) messages.push(node.message)
      this.#messages = messages
      this.#messagesValid = true
    }
    return this.#messages
  }

  /** The seqs of the nodes, in surface order. O(surface). */
  seqs(): SessionSeq[] {
    const seqs: SessionSeq[] = []
    for (let node = this.#head; node; node = node.next) seqs.push(node.seq as SessionSeq)
    return seqs
  }

  /**
   * Validates a replace and returns the nodes it shadows, in surface order. O(range).
   * Throws `SURFACE_REPLACE_INVALID` when the range is not made of current nodes in order
   * and, with `validate`, `SURFACE_SOURCES_INVALID` when `sourceEventSeqs` misses one.
   */
  collectReplace(event: SurfaceReplace, validate: boolean): SurfaceNode[] {
    const op = event.surfaceOp
    const fail = (reason: string): never => {
      throw new SessionError(
        'SURFACE_REPLACE_INVALID',
        `event '${event.type}' (seq ${event.seq}) replaces ${op.startSeq}..${op.endSeq}: ${reason}`,
        { type: event.type, seq: event.seq, startSeq: op.startSeq, endSeq: op.endSeq },
      )
    }
    const start = this.#node(op.startSeq)
    if (!start) return fail(`seq ${op.startSeq} is not a current surface node`)
    if (!this.#node(op.endSeq)) return fail(`seq ${op.endSeq} is not a current surface node`)
    const nodes: SurfaceNode[] = []
    let node: SurfaceNode | null = start
    while (node && node.seq !== op.endSeq) {
      nodes.push(node)
      node = node.next
    }
    if (!node) return fail(`seq ${op.endSeq} comes before seq ${op.startSeq} on the surface`)
    nodes.push(node)
    if (validate && !citesInOrder(event.sourceEventSeqs, nodes)) {
      const cited = new Set<number>(event.sourceEventSeqs ?? [])
      const missing = nodes.filter((n) => !cited.has(n.seq)).map((n) => n.seq)
      if (missing.length > 0) {
        throw new SessionError(
          'SURFACE_SOURCES_INVALID',
          `event '${event.type}' (seq ${event.seq}) shadows surface nodes ${missing.join(', ')} without citing them in sourceEventSeqs`,
          { type: event.type, seq: event.seq, missing },
        )
      }
    }
    return nodes
  }

  /** Adds a node at the tail. O(1). */
  append(seq: number, message: Message): void {
    const node: SurfaceNode = { seq, message, prev: this.#tail, next: null }
    if (this.#tail) this.#tail.next = node
    else this.#head = node
    this.#tail = node
    this.#index(seq, node)
    if (this.#messagesValid) this.#messages.push(message)
  }

  /** Replaces `nodes` (from {@link collectReplace}) with one new node. O(range). */
  replace(nodes: readonly SurfaceNode[], seq: number, message: Message): void {
    const first = nodes[0]!
    const last = nodes[nodes.length - 1]!
    const node: SurfaceNode = { seq, message, prev: first.prev, next: last.next }
    if (first.prev) first.prev.next = node
    else this.#head = node
    if (last.next) last.next.prev = node
    else this.#tail = node
    for (const n of nodes) {
      if (n.seq >= this.#denseFrom) this.#bySeq[n.seq - this.#denseFrom] = null
      else this.#restored.delete(n.seq)
    }
    this.#index(seq, node)
    this.#messagesValid = false
  }

  /**
   * Rebuilds a blank surface from its nodes in surface order (a checkpoint's), all of them
   * before `end`; later appends index from `end` on.
   */
  restore(nodes: readonly { readonly seq: number; readonly message: Message }[], end: number): void {
    for (const { seq, message } of nodes) {
      const node: SurfaceNode = { seq, message, prev: this.#tail, next: null }
      if (this.#tail) this.#tail.next = node
      else this.#head = node
      this.#tail = node
      this.#restored.set(seq, node)
      this.#messages.push(message)
    }
    this.#denseFrom = end
  }

  #node(seq: number): SurfaceNode | null {
    return seq >= this.#denseFrom
      ? (this.#bySeq[seq - this.#denseFrom] ?? null)
      : (this.#restored.get(seq) ?? null)
  }

  /** Records `node` at `seq`, which is after every seq indexed so far. */
  #index(seq: number, node: SurfaceNode): void {
    const bySeq = this.#bySeq
    const at = seq - this.#denseFrom
    while (bySeq.length < at) bySeq.push(null)
    bySeq.push(node)
  }
}
