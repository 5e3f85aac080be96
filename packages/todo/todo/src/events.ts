import { registerEvents } from '@keel/session'
import { z } from 'zod'

/**
 * Where one item of the plan stands.
 * - `pending`: not started.
 * - `in_progress`: being worked on now (at most one at a time unless configured otherwise).
 * - `completed`: done.
 * - `cancelled`: dropped; kept so the user sees it was decided against, not forgotten.
 */
export type TodoStatus = 'pending' | 'in_progress' | 'completed' | 'cancelled'

/** One item of the model's plan. */
export interface TodoItem {
  /** Chosen by the model; unique within one list, stable across writes of the same item. */
  id: string
  /** What to do, in the imperative ("Run the tests"). Never empty. */
  content: string
  status: TodoStatus
  /** The same in the present continuous ("Running the tests"), shown while in progress. */
  activeForm?: string
}

declare module '@keel/session' {
  interface SessionEventMap {
    /**
     * The model replaced its todo list (the `todo_write` tool). A whole-list snapshot: the
     * latest write wins on replay, so no earlier event needs to be read to know the list.
     * Log-only (not on the surface): compaction may shadow the tool call that produced it
     * without losing the list. Item ids are unique and contents non-empty.
     */
    'todo/write': { todos: TodoItem[] }
  }
}

/** Runtime schema of {@link TodoStatus}. */
export const todoStatusSchema = z.enum(['pending', 'in_progress', 'completed', 'cancelled'])

/** Runtime schema of one stored {@link TodoItem}. */
export const todoItemSchema = z.strictObject({
  id: z.string().min(1),
  content: z.string().min(1),
  status: todoStatusSchema,
  activeForm: z.string().min(1).optional(),
})

registerEvents('@keel/todo', {
  'todo/write': z.strictObject({
    todos: z.array(todoItemSchema).refine((todos) => new Set(todos.map((t) => t.id)).size === todos.length, {
      message: 'todo ids must be unique within one list',
    }),
  }),
})
