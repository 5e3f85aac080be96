import { KeelError } from '@keel/base'

/** Stable codes of {@link PresetError}. */
export type PresetErrorCode =
  /** A preset file is not JSON, or does not match the preset shape. */
  | 'PRESET_INVALID'
  /** A preset names a plugin no installed package provides. */
  | 'PRESET_PLUGIN_UNKNOWN'
  /**
   * A preset names a plugin package that cannot be used: it does not import, its default
   * export is not a plugin definition named as the package, or its events did not register.
   */
  | 'PRESET_PLUGIN_INVALID'
  /** A plugin's config in a preset does not validate against the plugin's schema. */
  | 'PRESET_PLUGIN_CONFIG_INVALID'
  /** Two presets share an id. */
  | 'PRESET_DUPLICATE'
  /** No preset has the requested id. */
  | 'PRESET_NOT_FOUND'
  /** A preset file or directory exists but cannot be read. */
  | 'PRESET_UNREADABLE'
  /** A switch of preset was asked for a session that already has work in it. */
  | 'PRESET_SWITCH_NOT_BLANK'
  /** A fork would run under a preset that does not know every event type of the history it keeps. */
  | 'PRESET_SWITCH_UNKNOWN_EVENTS'
  /** A recorded composition cannot be rebuilt (a plugin is gone or its config no longer validates). */
  | 'COMPOSITION_UNAVAILABLE'
  /** A plugin of the preset requires a service that no plugin of the preset provides. */
  | 'PRESET_SERVICE_MISSING'

/**
 * A preset problem. `details.file` names the preset file (or `shipped`, `code`, a session)
 * and `details.path` the JSON path inside it (`$.plugins[1].config.maxInProgress`), so the
 * user can go straight to the line.
 */
export class PresetError extends KeelError<PresetErrorCode> {}
