import './events.js'
import './services.js'

export { todoItemSchema, todoStatusSchema } from './events.generated.js'
export type { TodoItem, TodoStatus } from './events.js'
export { type TodoConfig, todoConfigSchema, todoPlugin } from './plugin.js'
export {
  reminderMessage,
  shouldRemind,
  TODO_REMINDER_SOURCE,
  type TodoActivity,
  todoActivityProjection,
} from './reminder.js'
export type { TodoListService } from './services.js'
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
