import { definePlugin } from '@keel/agent'
import { z } from 'zod'
import { ownedEventTypes } from './events.generated.js'
import { reminderMessage, shouldRemind, TODO_REMINDER_SOURCE, todoActivityProjection } from './reminder.js'
import type { TodoListService } from './services.js'
import { createTodoWriteTool, renderTodoList, todoProjection } from './todos.js'

/** The todo plugin's config, as a preset holds it. */
export const todoConfigSchema = z.strictObject({
  /** How many items may be `in_progress` at once. */
  maxInProgress: z.number().int().positive().default(1),
  /** Remind the model of its open items after this many steps without a `todo_write`; 0 turns reminders off. */
  reminderAfterSteps: z.number().int().nonnegative().default(6),
})

/** The validated config of {@link todoPlugin}. */
export type TodoConfig = z.output<typeof todoConfigSchema>

/**
 * The todo plugin: registers `todo_write`, shows the list to the user when it changes
 * (`display('todo-list', …)`), and before a step injects a reminder of the open items when
 * the model has let the list go stale. It provides `todo.list` and the `/todo` command.
 * Everything it reads comes from the log.
 */
export const todoPlugin = definePlugin<TodoConfig>({
  name: '@keel/todo',
  config: todoConfigSchema,
  events: ownedEventTypes,
  provides: ['todo.list'],
  setup(ctx) {
    const { session, config } = ctx
    const list: TodoListService = {
      current: () => session.project(todoProjection),
      render: () => renderTodoList(session.project(todoProjection)),
    }
    ctx.provide('todo.list', list)
    ctx.registerCommand('todo', {
      description: 'the todo list as the log has it',
      run: async () => (list.current().length === 0 ? 'no todo list yet' : list.render()),
    })
    ctx.registerTool(
      createTodoWriteTool({
        session,
        maxInProgress: config.maxInProgress,
        onChange: (todos) => ctx.display('todo-list', renderTodoList(todos)),
      }),
    )
    ctx.intercept({
      beforeStep() {
        const todos = session.project(todoProjection)
        const activity = session.project(todoActivityProjection)
        if (shouldRemind(todos, activity, config.reminderAfterSteps)) {
          ctx.inject(reminderMessage(todos, activity.stepsSinceWrite), { source: TODO_REMINDER_SOURCE })
        }
        return { action: 'enter' }
      },
    })
  },
})
