import { KeelError } from '@keel/base'

/** Stable codes of {@link HookError}. */
export type HookErrorCode =
  /** A hook settings file is not valid JSON or does not match the hook layout. */
  | 'HOOK_CONFIG_INVALID'
  /** A hook settings file exists but cannot be read (permissions, a directory, …). */
  | 'HOOK_CONFIG_UNREADABLE'
  /** A matcher is neither a name list nor a valid regular expression. */
  | 'HOOK_MATCHER_INVALID'
  /** The plugin's own options are inconsistent. */
  | 'HOOK_OPTIONS_INVALID'
  /** A `/hooks` subcommand is not known. */
  | 'HOOK_COMMAND_INVALID'

/**
 * A hook configuration problem. `details.file` names the settings file (or `plugin config`)
 * and `details.path` the JSON path inside it, so the user can go straight to the line.
 */
export class HookError extends KeelError<HookErrorCode> {}
