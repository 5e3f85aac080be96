/**
 * The typed services of one agent, by key. A plugin declares the keys it provides by
 * declaration merging, the way events merge into `SessionEventMap`:
 *
 * ```ts
 * declare module '@keel/tools' {
 *   interface ServiceMap {
 *     /** The notes the model keeps. *\/
 *     'notes.store': NotesStore
 *   }
 * }
 * ```
 *
 * Keys are `<owner>.<noun>` (`approval.policy`, `todo.list`). The interface lives in
 * `@keel/tools` so tools can read services too (`ToolContext.services`); augment
 * `'@keel/tools'`, never `'@keel/agent'`, which only re-exports it: TypeScript drops an
 * augmentation made through the re-export when it reads it before one made here, so in a
 * program that composes plugins, keys declared through `'@keel/agent'` vanish or not by
 * the order of its files. A service lives as long as the agent whose plugin provided it.
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging
export interface ServiceMap {}

/** A declared service key. */
export type ServiceKey = keyof ServiceMap & string

/** A read view of one agent's services (what tools and code outside plugins get). */
export interface ServiceView {
  /** The service under `key`, or undefined when no plugin of this agent provides it. */
  get<K extends ServiceKey>(key: K): ServiceMap[K] | undefined
  /** The keys provided in this agent, in setup order. */
  keys(): readonly ServiceKey[]
}

/** A view with no services (a tool called outside an agent, a hand-built test context). */
export const noServices: ServiceView = Object.freeze({
  get: () => undefined,
  keys: () => [],
})
