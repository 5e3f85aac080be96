import { definePlugin, type PluginDefinition } from '@keel/agent'
import type { ApprovalPolicy, SandboxMode } from '@keel/user-approval'
import { z } from 'zod'
import { ownedEventTypes } from './events.generated.js'
import {
  BUILTIN_PERMISSION_PRESETS,
  type PermissionPreset,
  type PresetView,
  presetView,
  resolvePreset,
  selectedPresetProjection,
} from './presets.js'
import type { PermissionPresetService } from './services.js'

// The knob values, listed here because a plugin reaches another plugin's package for types
// only; the checks below fail to compile when @keel/user-approval adds or drops a value.
const POLICIES = ['strict', 'on_request', 'never'] as const satisfies readonly ApprovalPolicy[]
const MODES = ['read_only', 'workspace_write', 'danger_full_access'] as const satisfies readonly SandboxMode[]
const allPolicies: Exclude<ApprovalPolicy, (typeof POLICIES)[number]> extends never ? true : never = true
const allModes: Exclude<SandboxMode, (typeof MODES)[number]> extends never ? true : never = true
void allPolicies
void allModes

/** The permission-presets plugin's config, as a preset holds it. */
export const permissionPresetsConfigSchema = z.strictObject({
  /** More presets, or other bundles under a shipped name, by name. */
  presets: z
    .record(
      z.string().regex(/^[a-z][a-z0-9-]{0,39}$/u, 'use 1–40 of a-z 0-9 - starting with a letter'),
      z.strictObject({
        approvalPolicy: z.enum(POLICIES),
        sandboxMode: z.enum(MODES),
        description: z.string().min(1).max(200).default('a preset of this configuration'),
      }),
    )
    .default({}),
})

/** The validated config of {@link permissionPresetsPlugin}. */
export type PermissionPresetsConfig = z.output<typeof permissionPresetsConfigSchema>

const describe = (view: PresetView): string =>
  `${view.name} (approval policy ${view.approvalPolicy}, sandbox mode ${view.sandboxMode})`

/**
 * Permission presets: one word for the approval policy × sandbox mode bundle, as Codex's
 * `--full-auto` / `--yolo` and Claude Code's permission modes offer it. Picking one
 * (`/permissions <name>`, or the `permission.preset` service) appends `permission/preset`,
 * then switches both knobs through `approval.policy` (so `approval/policy` and
 * `sandbox/mode` follow, and every plugin hearing switches hears them). Requires the
 * approval plugin; provides `permission.preset`.
 */
export const permissionPresetsPlugin: PluginDefinition<PermissionPresetsConfig> =
  definePlugin<PermissionPresetsConfig>({
    name: '@keel/permission-presets',
    config: permissionPresetsConfigSchema,
    events: ownedEventTypes,
    requires: ['approval.policy'],
    provides: ['permission.preset'],
    setup(ctx) {
      const { session } = ctx
      const policy = ctx.use('approval.policy')
      const presets: Readonly<Record<string, PermissionPreset>> = Object.freeze({
        ...BUILTIN_PERMISSION_PRESETS,
        ...ctx.config.presets,
      })
      const current = () => presetView(presets, session.project(selectedPresetProjection), policy.current())
      const service: PermissionPresetService = {
        presets: () => presets,
        current,
        select(name) {
          const chosen = resolvePreset(presets, name)
          session.append('permission/preset', { preset: chosen.name }, { ignorable: true })
          policy.setApprovalPolicy(chosen.preset.approvalPolicy)
          policy.setSandboxMode(chosen.preset.sandboxMode)
          return current()
        },
      }
      ctx.provide('permission.preset', service)
      ctx.registerCommand('permissions', {
        description: 'show or pick a permission preset: approval policy × sandbox mode in one word',
        usage: `[${Object.keys(presets).join('|')}]`,
        async run(args) {
          if (args.trim() === '') {
            const now = current()
            const list = Object.entries(presets).map(
              ([name, p]) => `${name === now.name ? '*' : ' '} ${name.padEnd(12)} ${p.description}`,
            )
            return `permissions: ${describe(now)}\n${list.join('\n')}`
          }
          return `permissions: ${describe(service.select(args))}`
        },
      })
    },
  })
