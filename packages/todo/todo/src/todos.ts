import { KeelError } from '@keel/base'
import { type Projection, registerProjection, type Session } from '@keel/session'
import { defineTool, errorOutput, type Tool } from '@keel/tools'
import { z } from 'zod'
import { todoStatusSchema } from './events.generated.js'
import type { TodoItem } from './events.js'

/**
 * The current todo list: the `todos` of the latest `todo/write`, empty before the first.
 * It reads `todo/write` events only, never the surface, so a compaction that shadows the
 * tool calls which wrote the list leaves the list intact.
 */
export const todoProjection: Projection<readonly TodoItem[]> = registerProjection<readonly TodoItem[]>({
  name: '@keel/todo/list',
  init: () => [],
  apply: (todos, event) => (event.type === 'todo/write' ? event.data.todos : todos),
  checkpoint: { version: 1 },
})

/** Why a `todo_write` was refused. The model gets the code and the message and can retry. */
export type TodoErrorCode =
  /** An item has an empty (or blank) id. */
  | 'TODO_ID_EMPTY'
  /** Two items share one id. */
  | 'TODO_ID_DUPLICATE'
  /** An item has empty (or blank) content. */
  | 'TODO_CONTENT_EMPTY'
  /** More items are `in_progress` than the plugin allows (one, by default). */
  | 'TODO_TOO_MANY_IN_PROGRESS'

/** A refused todo list; `details` names the offending items (`index`, `id`, `ids`). */
export class TodoError extends KeelError<TodoErrorCode> {}

/** What the checks allow. */
export interface TodoRules {
  /** How many items may be `in_progress` at once. */
  maxInProgress: number
}

/**
 * Checks a whole list against the rules and returns it normalized (blank `activeForm`
 * dropped). Throws {@link TodoError} naming the first problem, phrased so the model can
 * fix its next call.
 */
export function checkTodos(todos: readonly TodoWriteItem[], rules: TodoRules): TodoItem[] {
  const seen = new Map<string, number>()
  const out: TodoItem[] = []
  todos.forEach((item, index) => {
    if (item.id.trim() === '') {
      const message = `todos[${index}] has an empty id; give every item a short unique id`
      throw new TodoError('TODO_ID_EMPTY', message, { index })
    }
    const first = seen.get(item.id)
    if (first !== undefined) {
      throw new TodoError(
        'TODO_ID_DUPLICATE',
        `todos[${first}] and todos[${index}] both have id '${item.id}'; ids must be unique — merge the items or rename one`,
        { id: item.id, indexes: [first, index] },
      )
    }
    seen.set(item.id, index)
    if (item.content.trim() === '') {
      throw new TodoError(
        'TODO_CONTENT_EMPTY',
        `todos[${index}] (id '${item.id}') has empty content; say what the step is, or leave the item out`,
        { index, id: item.id },
      )
    }
    const normalized: TodoItem = { id: item.id, content: item.content, status: item.status }
    if (item.activeForm !== undefined && item.activeForm.trim() !== '') {
      normalized.activeForm = item.activeForm
    }
    out.push(normalized)
  })
  const inProgress = out.filter((t) => t.status === 'in_progress').map((t) => t.id)
  if (inProgress.length > rules.maxInProgress) {
    throw new TodoError(
      'TODO_TOO_MANY_IN_PROGRESS',
      `${inProgress.length} items are in_progress (${inProgress.join(', ')}) but at most ${rules.maxInProgress} may be; finish or set the others back to pending`,
      { ids: inProgress, max: rules.maxInProgress },
    )
  }
  return out
}

/** The list as the user sees it: a count line, then one line per item. */
export function renderTodoList(todos: readonly TodoItem[]): string {
  if (todos.length === 0) return 'Todo list: empty'
  const done = todos.filter((t) => t.status === 'completed').length
  const lines = todos.map((t) => {
    switch (t.status) {
      case 'completed':
        return `  [x] ${t.content}`
      case 'in_progress':
        return `  [>] ${t.activeForm ?? t.content}`
      case 'cancelled':
        return `  [-] ${t.content} (cancelled)`
      default:
        return `  [ ] ${t.content}`
    }
  })
  return [`Todo list (${done}/${todos.length} done)`, ...lines].join('\n')
}

/** The items that still need work: pending and in progress. */
export function openTodos(todos: readonly TodoItem[]): TodoItem[] {
  return todos.filter((t) => t.status === 'pending' || t.status === 'in_progress')
}

// Structural only: the semantic checks live in checkTodos so each failure gets its own code.
const todoWriteItemSchema = z.strictObject({
  id: z.string().describe('Short unique id, stable across writes of the same item'),
  content: z.string().describe('The step, imperative: "Run the tests"'),
  status: todoStatusSchema,
  activeForm: z.string().optional().describe('The step while in progress: "Running the tests"'),
})

/** One item as the model sends it to `todo_write` (checked by {@link checkTodos}). */
export type TodoWriteItem = z.infer<typeof todoWriteItemSchema>

/** The input of `todo_write`: the whole new list. */
export const todoWriteInputSchema = z.strictObject({
  todos: z.array(todoWriteItemSchema).describe('The complete list; it replaces the previous one'),
})

/** The input of `todo_write`. */
export type TodoWriteInput = z.infer<typeof todoWriteInputSchema>

/** What the `todo_write` tool needs from its plugin. */
export interface TodoWriteToolOptions extends TodoRules {
  /** The session the list is written to (the tool's plugin owns `todo/write`). */
  session: Session
  /** Called after a write that changed the list. */
  onChange?(todos: readonly TodoItem[]): void
}

/**
 * The `todo_write` tool. Each call sends the whole list; a valid list is appended as one
 * `todo/write` snapshot, an invalid one is refused with a {@link TodoErrorCode}.
 */
export function createTodoWriteTool(options: TodoWriteToolOptions): Tool<TodoWriteInput> {
  const { session } = options
  return defineTool({
    name: 'todo_write',
    description: [
      'Replace your todo list for this task. Send the whole list every time: items left out are removed.',
      `Use it for work of three or more steps; keep ${options.maxInProgress === 1 ? 'exactly one item' : `at most ${options.maxInProgress} items`} in_progress while you work,`,
      'mark items completed as soon as they are done, and cancelled when you decide against them.',
    ].join(' '),
    inputSchema: todoWriteInputSchema,
    annotations: { readOnly: false, destructive: false, openWorld: false, idempotent: true },
    async call(input) {
      let todos: TodoItem[]
      try {
        todos = checkTodos(input.todos, { maxInProgress: options.maxInProgress })
      } catch (error) {
        if (!(error instanceof TodoError)) throw error
        return errorOutput(error.code, error.message)
      }
      const before = session.project(todoProjection)
      session.append('todo/write', { todos })
      if (JSON.stringify(before) !== JSON.stringify(todos)) {
        options.onChange?.(session.project(todoProjection))
      }
      const open = openTodos(todos).length
      return `Todo list saved: ${todos.length} items, ${open} open. Keep it current as you work.`
    },
  })
}
