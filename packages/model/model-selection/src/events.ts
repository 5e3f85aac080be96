// The events @keel/model-selection owns. Declared once, here: `pnpm gen-persistence-catalog`
// generates their validators into events.generated.ts (registered on import) and the catalog.
import './events.generated.js'

/**
 * Who switched the model: a person at a UI (`user`), the command line at start (`cli`: `keel
 * --model`), a plugin (`plugin/<name>`), or a program through the `model.selection` service.
 */
export type SelectionSource = string

declare module '@keel/session' {
  interface SessionEventMap {
    /**
     * The model of the agent's following requests was switched (`/model <id> [effort]`,
     * `keel --model <id>`, the `model.selection` service). Log-only, inside or outside a
     * turn: a switch during a running turn applies from its next step. The latest one wins,
     * so resume and fork keep it. `model` is the id sent to the provider; `reasoningEffort`
     * the effort level sent with it (only for a model that has levels); `contextWindow` the
     * window the model brings, as the agent knew it when the switch was made (compaction and
     * the agent budget with it). With `default: true` the selection ends: the agent's own
     * model (its `model` option, a preset's) applies again, and `model` names it as it was
     * then. `previous` is the model in force before the switch.
     * @example {"model":"deepseek-v4-pro","reasoningEffort":"high","contextWindow":1048576,"source":"user","previous":"deepseek-v4-flash"}
     */
    'model/selection': {
      /** @minLength 1 @maxLength 200 @pattern ^\S+$ */
      model: string
      /** @minLength 1 @maxLength 40 */
      reasoningEffort?: string
      /** @integer @minimum 1 */
      contextWindow?: number
      default?: true
      /** @minLength 1 */
      source: SelectionSource
      /** @minLength 1 */
      previous?: string
    }
  }
}
