import './events.js'

export { scheduleChangeSchema, scheduleTriggerSchema } from './events.generated.js'
export type { ScheduleChange, ScheduleDeleteReason, ScheduleTrigger } from './events.js'
export { createScheduleTools, type ScheduleConfig, scheduleConfigSchema, schedulePlugin } from './plugin.js'
export { Scheduler, type SchedulerOptions } from './scheduler.js'
export {
  describeTrigger,
  formatDuration,
  isOneShot,
  missedRuns,
  nextDueAt,
  parseDuration,
  resolveTrigger,
  type Schedule,
  type ScheduleBook,
  type ScheduleEnd,
  ScheduleError,
  type ScheduleErrorCode,
  type ScheduleKind,
  type ScheduleRequest,
  type ScheduleRules,
  ScheduleStreamError,
  type ScheduleStreamErrorCode,
  scheduleProjection,
} from './schedules.js'
