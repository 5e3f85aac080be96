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
export { addPackageReferences, addRecordedPlugins, type ReferenceProblem } from './package-catalog.js'
export {
  importPluginPackage,
  isPackageName,
  isRelativePath,
  loadPluginPackage,
  type PackageProblem,
  type PackageResult,
  type PackageSearch,
} from './plugin-package.js'
export {
  definePreset,
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
  type PresetProblem,
  pluginReferenceProblems,
  recordedComposition,
  resolveComposition,
  WRITE_TOOLS,
} from './resolve.js'
export { codingPreset, headlessPreset, minimalPreset, reviewPreset, shippedPresets } from './shipped.js'
export {
  checkForkUnder,
  isBlank,
  isFreshFork,
  selectComposition,
  type UnknownEventType,
  unknownEventTypes,
} from './switch.js'
