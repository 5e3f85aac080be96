import type { PermissionPreset, PresetView } from './presets.js'

/** `permission.preset`: the permission presets, the one in force, and the way to pick one. */
export interface PermissionPresetService {
  /** Every preset by name (shipped ones and the config's). */
  presets(): Readonly<Record<string, PermissionPreset>>
  /** The preset in force (see {@link presetView}). */
  current(): PresetView
  /**
   * Picks a preset by name or alias: appends `permission/preset`, then the `approval/policy`
   * and `sandbox/mode` it implies. Throws `PERMISSION_PRESET_UNKNOWN` (nothing appended).
   */
  select(name: string): PresetView
}

declare module '@keel/tools' {
  interface ServiceMap {
    /** Permission presets (from @keel/permission-presets): list, read, pick. */
    'permission.preset': PermissionPresetService
  }
}
