import './events.js'

export { type TodoItem, type TodoStatus, todoItemSchema, todoStatusSchema } from './events.js'
export { type TodoConfig, todoConfigSchema, todoPlugin } from './plugin.js'
export {
  reminderMessage,
  shouldRemind,
  TODO_REMINDER_SOURCE,
  type TodoActivity,
  todoActivityProjection,
} from './reminder.js'
export {
  checkTodos,
  createTodoWriteTool,
  openTodos,
  renderTodoList,
  TodoError,
  type TodoErrorCode,
  type TodoRules,
  type TodoWriteInput,
  type TodoWriteItem,
  type TodoWriteToolOptions,
  todoProjection,
  todoWriteInputSchema,
} from './todos.js'
