import './events.js'
import './services.js'

export { ownedEventTypes as permissionPresetsEventTypes } from './events.generated.js'
export {
  type PermissionPresetsConfig,
  permissionPresetsConfigSchema,
  permissionPresetsPlugin,
} from './plugin.js'
export {
  BUILTIN_PERMISSION_PRESETS,
  PERMISSION_PRESET_ALIASES,
  type PermissionPreset,
  PermissionPresetError,
  type PresetView,
  presetView,
  resolvePreset,
  selectedPresetProjection,
} from './presets.js'
export type { PermissionPresetService } from './services.js'
