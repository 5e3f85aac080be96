import './events.js'

export { ownedEventTypes as projectInstructionsEventTypes } from './events.generated.js'
export type {
  DeliveryReason,
  InstructionFile,
  InstructionScope,
  SkippedInstruction,
  SkipReason,
} from './events.js'
export { cutPoint, findProjectRoot, readBounded } from './files.js'
export { findImports, MAX_IMPORTS_PER_FILE, resolveImport } from './imports.js'
export { initPrompt, repositoryOverview } from './init.js'
export { type InstructionBundle, type LoadedFile, type LoadOptions, loadInstructions } from './load.js'
export {
  type ProjectInstructionsConfig,
  type ProjectInstructionsOptions,
  projectInstructions,
  projectInstructionsConfigSchema,
  projectInstructionsPlugin,
} from './plugin.js'
export { describeDelivery, INSTRUCTIONS_SOURCE, renderInstructions } from './render.js'
export {
  type DeliveryFacts,
  deliveryDecision,
  type InstructionsState,
  instructionsProjection,
  type LastDelivery,
} from './state.js'
