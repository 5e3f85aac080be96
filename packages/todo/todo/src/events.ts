import './events.generated.js'

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
  /**
   * Chosen by the model; unique within one list, stable across writes of the same item.
   * @minLength 1
   */
  id: string
  /**
   * What to do, in the imperative ("Run the tests"). Never empty.
   * @minLength 1
   */
  content: string
  status: TodoStatus
  /**
   * The same in the present continuous ("Running the tests"), shown while in progress.
   * @minLength 1
   */
  activeForm?: string
}

declare module '@keel/session' {
  interface SessionEventMap {
    /**
     * The model replaced its todo list (the `todo_write` tool). A whole-list snapshot: the
     * latest write wins on replay, so no earlier event needs to be read to know the list.
     * Log-only (not on the surface): compaction may shadow the tool call that produced it
     * without losing the list. Item ids are unique and contents non-empty.
     * @example {"todos":[{"id":"1","content":"Run the tests","status":"in_progress","activeForm":"Running the tests"},{"id":"2","content":"Fix the failures","status":"pending"}]}
     */
    'todo/write': {
      /** @uniqueBy id */
      todos: TodoItem[]
    }
  }
}
