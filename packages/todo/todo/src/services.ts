import type { TodoItem } from './events.js'

/** `todo.list`: the model's plan as the log has it, for other plugins (a compaction carries it over). */
export interface TodoListService {
  /** The current list (the latest `todo/write`), empty before the first. */
  current(): readonly TodoItem[]
  /** The list as the user sees it (`Todo list (1/3 done)` and one line per item). */
  render(): string
}

declare module '@keel/tools' {
  interface ServiceMap {
    /** The todo plugin's list: read it, render it. */
    'todo.list': TodoListService
  }
}
