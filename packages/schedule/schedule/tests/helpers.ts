import { ManualClock as FakeClock } from '@keel/agent/testing'
import type { UserMessage } from '@keel/llm'
import { Session } from '@keel/session'
import { createToolContext, runToolCall, type Tool, type ToolOutput } from '@keel/tools'
import { Scheduler, type SchedulerOptions } from '../src/index.js'

/** The manual test clock of `@keel/agent/testing`, under the name these tests use. */
export { FakeClock }

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

/**
 * A real Session, a fake clock and a Scheduler over them, recording deliveries and notices.
 * A delivered message reaches the log as the agent's would: as a turn of its own, after the
 * step that queued it (`crashBeforeTurn`: never, as when the process stops in between).
 */
export function harness(
  options: Partial<SchedulerOptions> & {
    session?: Session
    clock?: FakeClock
    crashBeforeTurn?: boolean
  } = {},
): {
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
      if (options.crashBeforeTurn) return
      queueMicrotask(() => {
        const turn = session.lastTurn + 1
        session.append('turn/start', { turn })
        session.append('user/message', { message, source })
        session.append('turn/end', { turn, reason: 'completed' })
      })
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
