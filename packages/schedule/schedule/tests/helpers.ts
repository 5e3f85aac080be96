import type { Clock } from '@keel/agent'
import type { UserMessage } from '@keel/llm'
import { Session } from '@keel/session'
import { createToolContext, runToolCall, type Tool, type ToolOutput } from '@keel/tools'
import { Scheduler, type SchedulerOptions } from '../src/index.js'

/** A fake clock: time moves only when told; due timers run in order as it moves. */
export class FakeClock implements Clock {
  #now: number
  #next = 1
  readonly #timers = new Map<number, { at: number; callback: () => void }>()

  constructor(now = Date.UTC(2026, 0, 5, 8, 0, 0)) {
    this.#now = now
  }

  now(): number {
    return this.#now
  }

  /** Every delay a timer was requested with, in order. */
  readonly requested: number[] = []

  setTimeout(callback: () => void, ms: number): unknown {
    this.requested.push(ms)
    const id = this.#next++
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), callback })
    return id
  }

  clearTimeout(handle: unknown): void {
    this.#timers.delete(handle as number)
  }

  /**
   * Moves time forward by `ms`, running every timer that comes due, earliest first, and
   * letting the promise work each one starts (flush, then delivery) finish before the
   * clock moves on — as it would in real time.
   */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms
    for (;;) {
      let first: [number, { at: number; callback: () => void }] | undefined
      for (const entry of this.#timers) if (!first || entry[1].at < first[1].at) first = entry
      if (!first || first[1].at > target) break
      this.#timers.delete(first[0])
      this.#now = Math.max(this.#now, first[1].at)
      first[1].callback()
      await new Promise((resolve) => setImmediate(resolve))
    }
    this.#now = target
  }

  /** How many timers are armed. */
  get pending(): number {
    return this.#timers.size
  }
}

/** Monday 5 January 2026, 08:00 UTC: where every test's clock starts. */
export const T0 = Date.UTC(2026, 0, 5, 8, 0, 0)
export const MINUTE = 60_000
export const HOUR = 60 * MINUTE
export const DAY = 24 * HOUR

/** One delivered message, as the agent would have queued it. */
export interface Delivery {
  text: string
  source: string
  at: number
}

/** A real Session, a fake clock and a Scheduler over them, recording deliveries and notices. */
export function harness(options: Partial<SchedulerOptions> & { session?: Session; clock?: FakeClock } = {}): {
  session: Session
  clock: FakeClock
  scheduler: Scheduler
  delivered: Delivery[]
  notices: string[]
} {
  const clock = options.clock ?? new FakeClock(T0)
  const session = options.session ?? Session.create('sched', {}, undefined, { clock: () => clock.now() })
  const delivered: Delivery[] = []
  const notices: string[] = []
  const scheduler = new Scheduler({
    minIntervalMs: MINUTE,
    expireAfterMs: 7 * DAY,
    lateNoteAfterMs: MINUTE,
    maxLive: 20,
    defaultTimezone: 'UTC',
    deliver: (message: UserMessage, source: string) => {
      const text = message.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
      delivered.push({ text, source, at: clock.now() })
    },
    notify: (kind, text) => notices.push(`${kind}: ${text}`),
    ...options,
    session,
    clock,
  })
  return { session, clock, scheduler, delivered, notices }
}

/** The stored form of a session's log (what a store would hand back on resume). */
export function stored(session: Session): unknown[] {
  return JSON.parse(JSON.stringify(session.events)) as unknown[]
}

/** Runs a tool through the real tools runtime with raw JSON arguments. */
export async function callTool(tool: Tool<unknown>, args: unknown, session: Session): Promise<ToolOutput> {
  const context = createToolContext({ cwd: process.cwd(), session })
  return (await runToolCall(tool, JSON.stringify(args), context)).output
}

/** The text of a tool output. */
export function outputText(output: ToolOutput): string {
  return output.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
}
