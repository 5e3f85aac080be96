import { isKeelError } from '@keel/base'
import type { PresetAgent } from '@keel/presets'
import { UsageError } from './usage.js'

/** The start flags that run a plugin command once the agent is up (parseArgs options). */
export const startModeOptions = {
  /** `--plan`: start in plan mode (`/plan on`, @keel/plan-mode). */
  plan: { type: 'boolean' },
  /** `--permissions <name>`: pick a permission preset (`/permissions <name>`, @keel/permission-presets). */
  permissions: { type: 'string' },
} as const

/** Which command each start flag runs, and the plugin that registers it. */
const FLAGS = {
  permissions: { command: 'permissions', plugin: '@keel/permission-presets' },
  plan: { command: 'plan', plugin: '@keel/plan-mode' },
} as const

/**
 * Applies `--permissions <name>` and then `--plan` to a built agent by running the commands
 * of the plugins that own them, as the person's act (`command/run` with source `user`), so
 * the CLI knows no plugin. Returns what the commands answered, to show. A preset without
 * the plugin, or a preset name the plugin does not know, is a {@link UsageError} (exit 2).
 */
export async function applyStartModes(
  built: PresetAgent,
  values: { readonly plan?: boolean | undefined; readonly permissions?: string | undefined },
): Promise<string[]> {
  const runs: Array<{ flag: keyof typeof FLAGS; args: string }> = []
  if (values.permissions !== undefined) runs.push({ flag: 'permissions', args: values.permissions })
  if (values.plan === true) runs.push({ flag: 'plan', args: 'on' })
  const shown: string[] = []
  for (const { flag, args } of runs) {
    const { command, plugin } = FLAGS[flag]
    if (!built.agent.commands().some((c) => c.name === command)) {
      throw new UsageError(
        `--${flag} needs the ${plugin} plugin, which preset ${built.composition.preset} does not include (try --preset coding)`,
      )
    }
    try {
      const answer = await built.agent.runCommand(command, args, { source: 'user' })
      if (answer !== undefined && answer !== '') shown.push(answer)
    } catch (error) {
      if (isKeelError(error, 'PERMISSION_PRESET_UNKNOWN')) throw new UsageError(`--${flag}: ${error.message}`)
      throw error
    }
  }
  return shown
}
