import type { DeveloperMessage } from '@keel/llm'
import { type Projection, registerProjection } from '@keel/session'
import type { TodoItem } from './events.js'
import { openTodos } from './todos.js'

/** The `source` of the reminder's `developer/message`; the activity fold recognises it by this. */
export const TODO_REMINDER_SOURCE = 'todo/reminder'

/**
 * How long the model has gone without touching its list, counted in whole steps from the
 * log. A step counts once it ended and it started after the latest write (or reminder):
 * the step in which the model wrote the list does not count as a step without an update.
 */
export interface TodoActivity {
  /** Steps ended since the latest `todo/write` (all steps when there was none). */
  readonly stepsSinceWrite: number
  /** Steps ended since the latest reminder, or null when none was injected. */
  readonly stepsSinceReminder: number | null
  /** Whether the open step started after the latest write (so its end counts). */
  readonly openStepCountsForWrite: boolean
  /** Whether the open step started after the latest reminder. */
  readonly openStepCountsForReminder: boolean
}

/** Folds {@link TodoActivity} from `step/*`, `todo/write` and reminder `developer/message` events. */
export const todoActivityProjection: Projection<TodoActivity> = registerProjection<TodoActivity>({
  name: '@keel/todo/activity',
  init: () => ({
    stepsSinceWrite: 0,
    stepsSinceReminder: null,
    openStepCountsForWrite: false,
    openStepCountsForReminder: false,
  }),
  apply(state, event) {
    switch (event.type) {
      case 'step/start':
        return { ...state, openStepCountsForWrite: true, openStepCountsForReminder: true }
      case 'step/end':
        return {
          stepsSinceWrite: state.stepsSinceWrite + (state.openStepCountsForWrite ? 1 : 0),
          stepsSinceReminder:
            state.stepsSinceReminder === null
              ? null
              : state.stepsSinceReminder + (state.openStepCountsForReminder ? 1 : 0),
          openStepCountsForWrite: false,
          openStepCountsForReminder: false,
        }
      case 'todo/write':
        return { ...state, stepsSinceWrite: 0, openStepCountsForWrite: false }
      case 'developer/message':
        if (event.data.source !== TODO_REMINDER_SOURCE) return state
        return { ...state, stepsSinceReminder: 0, openStepCountsForReminder: false }
      default:
        return state
    }
  },
  checkpoint: { version: 1 },
})

/**
 * Whether to remind before the next step: there are open items, the model has not
 * written the list for `afterSteps` steps, and no reminder came in the last `afterSteps`
 * steps either. `afterSteps` 0 turns reminders off.
 */
export function shouldRemind(
  todos: readonly TodoItem[],
  activity: TodoActivity,
  afterSteps: number,
): boolean {
  if (afterSteps <= 0 || openTodos(todos).length === 0) return false
  if (activity.stepsSinceWrite < afterSteps) return false
  return activity.stepsSinceReminder === null || activity.stepsSinceReminder >= afterSteps
}

/** The reminder: the open items, and what to do about them. */
export function reminderMessage(todos: readonly TodoItem[], steps: number): DeveloperMessage {
  const lines = openTodos(todos).map(
    (t) => `- [${t.status === 'in_progress' ? 'in progress' : 'pending'}] ${t.content}`,
  )
  const text = [
    `Your todo list has not been updated for ${steps} steps. Open items:`,
    ...lines,
    'If the list is out of date, update it with todo_write (mark finished items completed). Do not mention this reminder to the user.',
  ].join('\n')
  return { role: 'developer', content: [{ type: 'text', text }] }
}
