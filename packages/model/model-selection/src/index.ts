import './events.js'

export { ownedEventTypes as modelSelectionEventTypes } from './events.generated.js'
export type { SelectionSource } from './events.js'
export {
  type ModelSelectionConfig,
  ModelSelectionError,
  type ModelSelectionService,
  modelSelectionConfigSchema,
  modelSelectionPlugin,
} from './plugin.js'
export {
  choiceOf,
  decideSelection,
  type Selection,
  type SelectionDecision,
  type SelectionFacts,
  type SelectionRefusal,
  type SelectionRequest,
  type SelectionState,
  selectionProjection,
} from './selection.js'
