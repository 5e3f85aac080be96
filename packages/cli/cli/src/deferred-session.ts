import { randomUUID } from 'node:crypto'
import type { StoreHandle } from '@keel/agent'
import { Session, type SessionEvent, type SessionHeaderInit } from '@keel/session'
import type { SessionHandle, SessionStore } from '@keel/store'
import { oneLine } from './render.js'

/** The first prompt, as a session title. */
export function titleOf(event: SessionEvent<'user/message'>): string {
  const text = event.data.message.content.map((b) => (b.type === 'text' ? b.text : '')).join(' ')
  return oneLine(text, 80) || '(image)'
}

/**
 * A new session that reaches the store only once it holds a user message — the first
 * prompt the plugins let through (a prompt a `UserPromptSubmit` hook blocks leaves no
 * `user/message`, so it is stored nowhere, title included). Until then the agent writes to
 * an in-memory log; the first `flush` after a user message creates the stored session from
 * it, titled with that prompt, and from then on every append is written through (the
 * store's own checks refuse an append before the in-memory log commits it). A `keel` opened
 * and closed without a prompt stores nothing.
 */
export class DeferredSession implements StoreHandle {
  readonly session: Session
  readonly directory: string | undefined
  readonly #store: SessionStore
  #stored: SessionHandle | undefined
  #creating: Promise<void> | undefined
  #failure: unknown
  /**
   * Whether the stored header is titled with the first prompt (default). Off for an
   * interactive session whose preset has `@keel/session-title`: the model titles it after
   * its first turn, and the listing falls back to the first prompt meanwhile.
   */
  titleFromPrompt = true

  constructor(store: SessionStore, header: SessionHeaderInit, directoryOf?: (id: string) => string) {
    this.#store = store
    const id = randomUUID()
    this.directory = directoryOf?.(id)
    this.session = Session.create(id, header, undefined, { beforeCommit: (event) => this.#through(event) })
  }

  /** Whether the session is in the store (a prompt got through). */
  get stored(): boolean {
    return this.#stored !== undefined
  }

  #through(event: SessionEvent): void {
    if (this.#failure !== undefined) throw this.#failure
    if (this.#stored) this.#forward(this.#stored, event)
  }

  #forward(handle: SessionHandle, event: SessionEvent): void {
    const options: Record<string, unknown> = { time: event.time }
    if (event.ignorable) options.ignorable = true
    if (event.surfaceOp !== undefined) options.surfaceOp = event.surfaceOp
    if (event.sourceEventSeqs !== undefined) options.sourceEventSeqs = event.sourceEventSeqs
    const append = handle.session.append.bind(handle.session) as (
      type: string,
      data: unknown,
      options: Record<string, unknown>,
    ) => unknown
    append(event.type, event.data, options)
  }

  async #create(): Promise<void> {
    const first = this.session.events.find((e) => e.type === 'user/message')
    if (!first) return
    const copied = this.session.events.length
    const seed = JSON.parse(JSON.stringify(this.session.events)) as unknown[]
    const { id, ...header } = this.session.header
    const from = Session.create(
      id,
      this.titleFromPrompt ? { ...header, title: titleOf(first) } : header,
      seed,
    )
    const handle = await this.#store.create({ from })
    // Appends made while the store created the session: write them through now, in order.
    try {
      for (const event of this.session.events.slice(copied)) this.#forward(handle, event)
    } catch (error) {
      this.#failure = error
      await handle.close().catch(() => undefined)
      throw error
    }
    this.#stored = handle
  }

  async flush(): Promise<void> {
    if (this.#failure !== undefined) throw this.#failure
    if (!this.#stored) {
      this.#creating ??= this.#create().finally(() => {
        this.#creating = undefined
      })
      await this.#creating
    }
    await this.#stored?.flush()
  }

  async close(): Promise<void> {
    await this.flush().catch((error: unknown) => {
      this.#failure ??= error
    })
    await this.#stored?.close()
    if (this.#failure !== undefined) throw this.#failure
  }
}
