import type { FoldSource } from './projections.js'
import type { SessionEvent } from './types.js'

/**
 * Reads stored events of a session's log that are not held in memory (a session resumed
 * from a checkpoint holds the tail after it, the surface and a few recent events): the
 * raw envelopes of seqs `[from, to)`, in order, fresh from `JSON.parse` (blob stubs
 * resolved). Synchronous, because `session.events[seq]` is. A store's reader throws its
 * own typed error (`SESSION_CORRUPT`, …) when the bytes cannot be read.
 */
export interface PrefixReader {
  read(from: number, to: number): unknown[]
}

/** Events read together from a {@link PrefixReader}, and how many such blocks stay cached. */
const BLOCK = 256
const CACHED_BLOCKS = 8

/**
 * A session's events by seq. Normally every event is in memory (`base` 0). A session
 * resumed from a checkpoint holds only the events from `base` on, plus pinned earlier ones
 * (surface nodes, recent events); any other earlier event is read on demand, in blocks,
 * through `load` (which checks what it reads), and a few blocks are cached.
 */
export class EventLog implements FoldSource {
  readonly #base: number
  readonly #tail: SessionEvent[] = []
  readonly #pinned: Map<number, SessionEvent>
  readonly #load: ((from: number, to: number) => SessionEvent[]) | undefined
  /** Cached blocks by their first seq, oldest first (a Map keeps insertion order). */
  readonly #blocks = new Map<number, SessionEvent[]>()
  #view: readonly SessionEvent[] | undefined

  /** `pinned` is taken over (kept, not copied): the caller hands it on and no longer changes it. */
  constructor(
    base = 0,
    pinned: Map<number, SessionEvent> = new Map(),
    load?: (from: number, to: number) => SessionEvent[],
  ) {
    this.#base = base
    this.#pinned = pinned
    this.#load = load
  }

  /** The first seq held in memory as a dense run (0 unless resumed from a checkpoint). */
  get base(): number {
    return this.#base
  }

  get length(): number {
    return this.#base + this.#tail.length
  }

  push(event: SessionEvent): void {
    this.#tail.push(event)
  }

  /** The event at `seq` (0 ≤ seq < length), read from the store when it is not in memory. */
  at(seq: number): SessionEvent {
    if (seq >= this.#base) return this.#tail[seq - this.#base]!
    return this.#pinned.get(seq) ?? this.#read(seq)
  }

  /** The event at `seq` if it is in memory, without reading. */
  resident(seq: number): SessionEvent | undefined {
    return seq >= this.#base ? this.#tail[seq - this.#base] : this.#pinned.get(seq)
  }

  /** Seqs before `base` that are held in memory. */
  pinnedSeqs(): IterableIterator<number> {
    return this.#pinned.keys()
  }

  /**
   * The log as a read-only array: the events themselves when all are in memory; otherwise
   * an array-like view whose indexes read through {@link at} (iteration, `find`, `slice`
   * work as on an array, reading blocks on demand).
   */
  view(): readonly SessionEvent[] {
    if (this.#base === 0) return this.#tail
    this.#view ??= readOnlyView(this)
    return this.#view
  }

  #read(seq: number): SessionEvent {
    const from = seq - (seq % BLOCK)
    let block = this.#blocks.get(from)
    if (block) {
      this.#blocks.delete(from)
    } else {
      if (!this.#load) throw new RangeError(`event ${seq} is not in memory and the log has no reader`)
      block = this.#load(from, Math.min(from + BLOCK, this.#base))
      if (this.#blocks.size >= CACHED_BLOCKS) this.#blocks.delete(this.#blocks.keys().next().value!)
    }
    this.#blocks.set(from, block)
    return block[seq - from]!
  }
}

const INDEX = /^(?:0|[1-9][0-9]*)$/

/** A Proxy over an empty array whose indexes and `length` come from `log` (array methods work on it). */
function readOnlyView(log: EventLog): readonly SessionEvent[] {
  const index = (key: string | symbol): number => {
    if (typeof key !== 'string' || !INDEX.test(key)) return -1
    const n = Number(key)
    return n < log.length ? n : -1
  }
  const refuse = (): boolean => {
    throw new TypeError('session.events is read-only; append through session.append')
  }
  return new Proxy([] as SessionEvent[], {
    get(target, key, receiver) {
      if (key === 'length') return log.length
      const i = index(key)
      if (i >= 0) return log.at(i)
      return Reflect.get(target, key, receiver)
    },
    has(target, key) {
      return index(key) >= 0 || Reflect.has(target, key)
    },
    ownKeys() {
      const keys: string[] = []
      for (let i = 0; i < log.length; i++) keys.push(String(i))
      keys.push('length')
      return keys
    },
    getOwnPropertyDescriptor(target, key) {
      if (key === 'length')
        return { value: log.length, writable: true, enumerable: false, configurable: false }
      const i = index(key)
      if (i >= 0) return { value: log.at(i), writable: false, enumerable: true, configurable: true }
      return Reflect.getOwnPropertyDescriptor(target, key)
    },
    set: refuse,
    defineProperty: refuse,
    deleteProperty: refuse,
  })
}
