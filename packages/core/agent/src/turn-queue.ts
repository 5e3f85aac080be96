import type { InboxItem } from './turn.js'

/**
 * An agent's turns: run one at a time in the order queued, once the agent has started
 * (turns queued while plugins are set up wait for it). Also runs a direct tool call as
 * exclusive work, and tells waiters when nothing runs or waits any more.
 */
export class TurnQueue {
  readonly #items: InboxItem[] = []
  readonly #run: (item: InboxItem) => Promise<() => void>
  #running = false
  #started = false
  #idleWaiters: Array<() => void> = []

  /**
   * `run` runs one turn (it must not throw) and returns what settles its item: called once
   * the queue knows whether another turn follows, so a caller hearing of its turn's end
   * finds the agent idle when nothing else waits.
   */
  constructor(run: (item: InboxItem) => Promise<() => void>) {
    this.#run = run
  }

  /** Whether a turn (or exclusive work) runs, or a turn waits. */
  get busy(): boolean {
    return this.#running || this.#items.length > 0
  }

  /** Whether {@link start} was called. */
  get started(): boolean {
    return this.#started
  }

  /** The agent is ready: queued turns run. */
  start(): void {
    this.#started = true
    if (this.#items.length > 0) void this.#pump()
  }

  /** Queues a turn; it runs after those before it. */
  push(item: InboxItem): void {
    this.#items.push(item)
    void this.#pump()
  }

  /** Takes every waiting turn out of the queue (the agent failed to start). */
  drain(): InboxItem[] {
    return this.#items.splice(0)
  }

  /** Resolves once nothing runs or waits. */
  idle(): Promise<void> {
    if (!this.busy) return Promise.resolve()
    return new Promise((resolve) => this.#idleWaiters.push(resolve))
  }

  /** Runs `work` as if it were a turn (the caller checked the queue is not busy). */
  async exclusive<T>(work: () => Promise<T>): Promise<T> {
    this.#running = true
    try {
      return await work()
    } finally {
      this.#settled()
      if (this.#items.length > 0) void this.#pump()
    }
  }

  async #pump(): Promise<void> {
    if (this.#running || !this.#started) return
    this.#running = true
    try {
      for (let item = this.#items.shift(); item !== undefined; item = this.#items.shift()) {
        const deliver = await this.#run(item)
        deliver()
        if (this.#items.length === 0) this.#settled()
      }
    } finally {
      if (this.#running) this.#settled()
    }
  }

  /** Nothing runs any more: idle waiters are released. */
  #settled(): void {
    this.#running = false
    const waiters = this.#idleWaiters
    this.#idleWaiters = []
    for (const resolve of waiters) resolve()
  }
}
