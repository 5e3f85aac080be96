import { definePlugin } from '@keel/agent'
import { defineTool, errorOutput, type Tool, type ToolOutput } from '@keel/tools'
import { z } from 'zod'
import { ownedEventTypes } from './events.generated.js'
import { Scheduler } from './scheduler.js'
import { describeTrigger, type Schedule, ScheduleError } from './schedules.js'

const MINUTE = 60_000
const DAY = 24 * 60 * MINUTE

/** The schedule plugin's config, as a preset holds it. */
export const scheduleConfigSchema = z.strictObject({
  /** Shortest interval of a recurring schedule (`every`, `cron`), ms. Default one minute. */
  minIntervalMs: z.number().int().positive().default(MINUTE),
  /** How long a recurring schedule lives before it expires, ms. Default 7 days. */
  expireAfterMs: z
    .number()
    .int()
    .positive()
    .default(7 * DAY),
  /** Firings later than this (ms) tell the model how late they are. Default one minute. */
  lateNoteAfterMs: z.number().int().nonnegative().default(MINUTE),
  /** How many schedules one session may have live at once. */
  maxLive: z.number().int().positive().default(20),
  /** Time zone of cron expressions that name none; the host's own when absent. */
  timezone: z.string().min(1).optional(),
})

/** The validated config of {@link schedulePlugin}. */
export type ScheduleConfig = z.output<typeof scheduleConfigSchema>

const createInputSchema = z.strictObject({
  kind: z
    .enum(['after', 'at', 'every', 'cron'])
    .describe(
      'after: once after a delay; at: once at a time; every: repeatedly at an interval; cron: repeatedly on a cron expression',
    ),
  when: z
    .string()
    .describe(
      "after/every: a duration like '90s', '15m', '2h', '1h30m', '1d'; at: ISO 8601 time with offset like '2026-12-01T09:00:00+01:00'; cron: 5 fields like '0 9 * * 1-5'",
    ),
  prompt: z.string().describe('The message you will receive when it fires: say what to do then'),
  timezone: z.string().optional().describe("cron only: IANA time zone like 'Europe/Paris'"),
})

const deleteInputSchema = z.strictObject({
  id: z.string().describe('The schedule id, from schedule_create or schedule_list'),
})

function failure(error: unknown): ToolOutput {
  if (!(error instanceof ScheduleError)) throw error
  return errorOutput(error.code, error.message)
}

function line(scheduler: Scheduler, schedule: Schedule): string {
  const next = scheduler.nextRunAt(schedule)
  const expiry =
    schedule.expiresAt === undefined ? '' : `, expires ${new Date(schedule.expiresAt).toISOString()}`
  return `${schedule.id}: ${describeTrigger(schedule.trigger)}, next ${next === null ? 'never' : new Date(next).toISOString()}${expiry} — ${JSON.stringify(schedule.prompt)}`
}

/** The three tools over one session's {@link Scheduler}: `schedule_create`, `schedule_list`, `schedule_delete`. */
export function createScheduleTools(scheduler: Scheduler): Array<Tool<unknown>> {
  const create = defineTool({
    name: 'schedule_create',
    description:
      'Schedule a prompt to be sent to you later as a new user message: once (after a delay, or at a time) or repeatedly (every interval, or on a cron expression). Recurring schedules expire after a while. Returns the schedule id.',
    inputSchema: createInputSchema,
    annotations: { readOnly: false, destructive: false, openWorld: false, idempotent: false },
    async call(input) {
      try {
        const schedule = scheduler.create({
          kind: input.kind,
          when: input.when,
          prompt: input.prompt,
          ...(input.timezone === undefined ? {} : { timezone: input.timezone }),
        })
        return `Created ${line(scheduler, schedule)}`
      } catch (error) {
        return failure(error)
      }
    },
  })
  const list = defineTool({
    name: 'schedule_list',
    description: 'List the live schedules of this session with their next run.',
    inputSchema: z.strictObject({}),
    annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
    isConcurrencySafe: true,
    async call() {
      const schedules = scheduler.schedules
      if (schedules.length === 0) return 'No live schedules.'
      return schedules.map((s) => line(scheduler, s)).join('\n')
    },
  })
  const remove = defineTool({
    name: 'schedule_delete',
    description: 'Delete a live schedule so it never fires again.',
    inputSchema: deleteInputSchema,
    annotations: { readOnly: false, destructive: true, openWorld: false, idempotent: false },
    async call(input) {
      try {
        const schedule = scheduler.delete(input.id)
        return `Deleted schedule ${schedule.id} (${describeTrigger(schedule.trigger)}).`
      } catch (error) {
        return failure(error)
      }
    },
  })
  return [create, list, remove] as Array<Tool<unknown>>
}

/**
 * The schedule plugin: one {@link Scheduler} per agent session, started at setup (which
 * validates the stored stream, reports firings a crash lost and fires what came due while
 * no agent ran) and stopped when the agent closes — or as soon as the agent refuses a
 * firing because it is closing (that firing is kept for the next open). Fired schedules
 * arrive as queued user turns with source `schedule/<id>`.
 */
export const schedulePlugin = definePlugin<ScheduleConfig>({
  name: '@keel/schedule',
  config: scheduleConfigSchema,
  events: ownedEventTypes,
  setup(ctx) {
    const { config } = ctx
    const scheduler = new Scheduler({
      session: ctx.session,
      clock: ctx.clock,
      minIntervalMs: config.minIntervalMs,
      expireAfterMs: config.expireAfterMs,
      lateNoteAfterMs: config.lateNoteAfterMs,
      maxLive: config.maxLive,
      defaultTimezone: config.timezone ?? Intl.DateTimeFormat().resolvedOptions().timeZone,
      deliver: (message, source) => ctx.enqueue(message, { source }),
      notify: (kind, text) => ctx.display(kind, text),
    })
    for (const tool of createScheduleTools(scheduler)) ctx.registerTool(tool)
    scheduler.start()
    return () => scheduler.stop()
  },
})
