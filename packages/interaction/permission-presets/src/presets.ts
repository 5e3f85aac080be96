import { elide, KeelError } from '@keel/base'
import { type Projection, registerProjection } from '@keel/session'
import type { ApprovalPolicy, SandboxMode } from '@keel/user-approval'

/** One permission preset: a bundle of the two knobs of `@keel/user-approval`. */
export interface PermissionPreset {
  readonly approvalPolicy: ApprovalPolicy
  readonly sandboxMode: SandboxMode
  /** One line for `/permissions`. */
  readonly description: string
}

/** The presets Keel ships, least to most permissive. */
export const BUILTIN_PERMISSION_PRESETS: Readonly<Record<string, PermissionPreset>> = Object.freeze({
  'read-only': {
    approvalPolicy: 'on_request',
    sandboxMode: 'read_only',
    description: 'look, do not touch: no writes; shell commands in a read-only sandbox (Codex read-only)',
  },
  'ask-always': {
    approvalPolicy: 'strict',
    sandboxMode: 'workspace_write',
    description: 'ask before every write, shell command and outside read (Claude Code default)',
  },
  'auto-edit': {
    approvalPolicy: 'on_request',
    sandboxMode: 'workspace_write',
    description:
      'edit the workspace and run sandboxed commands without asking; ask for the rest (Codex --full-auto, Claude Code acceptEdits)',
  },
  'full-access': {
    approvalPolicy: 'never',
    sandboxMode: 'danger_full_access',
    description: 'no sandbox, never ask: anything runs (Codex --yolo, Claude Code bypassPermissions)',
  },
})

/** Other harnesses' names for the shipped presets. */
export const PERMISSION_PRESET_ALIASES: Readonly<Record<string, string>> = Object.freeze({
  'full-auto': 'auto-edit',
  'accept-edits': 'auto-edit',
  acceptedits: 'auto-edit',
  yolo: 'full-access',
  'bypass-permissions': 'full-access',
  bypasspermissions: 'full-access',
})

/** `/permissions` and `keel --permissions` named no preset. */
export class PermissionPresetError extends KeelError<'PERMISSION_PRESET_UNKNOWN'> {}

/**
 * The preset a name means: a preset's own name, or an alias (`yolo`, `full-auto`,
 * `acceptEdits`, `bypassPermissions`; case-insensitive). Throws `PERMISSION_PRESET_UNKNOWN`
 * naming the known ones; `plan` points to `/plan`.
 */
export function resolvePreset(
  presets: Readonly<Record<string, PermissionPreset>>,
  name: string,
): { readonly name: string; readonly preset: PermissionPreset } {
  const key = name.trim().toLowerCase()
  const canonical = Object.hasOwn(presets, key) ? key : PERMISSION_PRESET_ALIASES[key]
  if (canonical !== undefined && Object.hasOwn(presets, canonical)) {
    return { name: canonical, preset: presets[canonical]! }
  }
  const hint = key === 'plan' ? ' (plan mode is its own: /plan, keel --plan)' : ''
  throw new PermissionPresetError(
    'PERMISSION_PRESET_UNKNOWN',
    `no permission preset ${JSON.stringify(elide(name.trim()))}${hint}; presets: ${Object.keys(presets).join(', ')}`,
    { preset: elide(name) },
  )
}

/** The latest `permission/preset`, or undefined before the first. */
export const selectedPresetProjection: Projection<string | undefined> = registerProjection<
  string | undefined
>({
  name: '@keel/permission-presets/selected',
  init: () => undefined,
  apply: (selected, event) => (event.type === 'permission/preset' ? event.data.preset : selected),
  checkpoint: {
    version: 1,
    save: (selected) => selected ?? null,
    restore: (saved) => (typeof saved === 'string' ? saved : undefined),
  },
})

/** What a UI shows: the preset in force, or `custom` with the two knobs. */
export interface PresetView {
  /** The preset whose bundle is in force, or `custom` when none matches. */
  readonly name: string
  /** The person picked it (the latest `permission/preset`), as opposed to a match of the configured default. */
  readonly picked: boolean
  readonly approvalPolicy: ApprovalPolicy
  readonly sandboxMode: SandboxMode
}

/**
 * The preset shown for the knobs in force: the one the person picked while its bundle still
 * matches them; otherwise the first preset whose bundle matches (the configured default,
 * say), otherwise `custom`. A `/policy` or `/sandbox` switch after a pick shows as a
 * match of another preset, or `custom`.
 */
export function presetView(
  presets: Readonly<Record<string, PermissionPreset>>,
  selected: string | undefined,
  knobs: { readonly approvalPolicy: ApprovalPolicy; readonly sandboxMode: SandboxMode },
): PresetView {
  const matches = (p: PermissionPreset | undefined) =>
    p !== undefined && p.approvalPolicy === knobs.approvalPolicy && p.sandboxMode === knobs.sandboxMode
  if (selected !== undefined && Object.hasOwn(presets, selected) && matches(presets[selected])) {
    return { name: selected, picked: true, ...knobs }
  }
  const found = Object.entries(presets).find(([, p]) => matches(p))?.[0]
  return { name: found ?? 'custom', picked: false, ...knobs }
}
