import './events.js'

export { createPresetAgent, type PresetAgent, type PresetAgentOptions } from './agent.js'
export {
  builtinCatalog,
  builtinPlugins,
  createPluginCatalog,
  installedVersion,
  type PluginCatalog,
  type PluginProvider,
  type PluginRuntime,
} from './catalog.js'
export { PresetError, type PresetErrorCode } from './errors.js'
export { agentCompositionSchema, ownedEventTypes as presetEventTypes } from './events.generated.js'
export { type LocatedJson, parseLocatedJson, type TextPosition } from './json-locate.js'
export {
  type BrokenPresetFile,
  brokenError,
  findPreset,
  formatPresetProblem,
  type LoadPresetsOptions,
  loadPresetReport,
  loadPresets,
  type PresetFileProblem,
  type PresetReport,
  type PresetSource,
  readPresetFile,
} from './load.js'
export {
  definePreset,
  type ModelPrice,
  modelPriceSchema,
  type PluginReference,
  type Preset,
  type PresetInput,
  pluginReferenceSchema,
  presetSchema,
  TOOL_GROUPS,
  type ToolGroup,
} from './preset.js'
export {
  type BuiltComposition,
  buildComposition,
  checkPluginReferences,
  configDigest,
  isBlank,
  type PresetProblem,
  pluginReferenceProblems,
  recordedComposition,
  resolveComposition,
  selectComposition,
  WRITE_TOOLS,
} from './resolve.js'
export { codingPreset, headlessPreset, minimalPreset, reviewPreset, shippedPresets } from './shipped.js'
