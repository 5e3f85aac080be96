import { boundIssues } from '@keel/base'
import type { z } from 'zod'
import { AgentError } from './errors.js'
import type { PluginDefinition } from './plugin.js'

/**
 * A plugin together with the config it runs with (plain JSON, validated by the plugin's
 * schema). An absent config is validated as `undefined`, then as `{}`, so a plugin whose
 * config fields all have defaults can be used bare.
 */
export interface PluginUse<Config = unknown> {
  readonly plugin: PluginDefinition<Config>
  readonly config?: unknown
}

/** How a plugin is given to an agent: bare (no config) or with its config. */
export type PluginEntry = PluginDefinition<unknown> | PluginUse<unknown>

/** Pairs a plugin with its config; the config is validated when the agent starts. */
export function usePlugin<Config>(plugin: PluginDefinition<Config>, config?: unknown): PluginUse<Config> {
  return config === undefined ? { plugin } : { plugin, config }
}

/** The plugin of an entry and the config it was given (undefined when used bare). */
export function resolveEntry(entry: PluginEntry): { plugin: PluginDefinition<unknown>; config: unknown } {
  if ('plugin' in entry && typeof entry.plugin === 'object' && entry.plugin !== null) {
    return { plugin: entry.plugin, config: entry.config }
  }
  return { plugin: entry as PluginDefinition<unknown>, config: undefined }
}

/** Validates a plugin's config; the error names the plugin and the JSON path of the first problem. */
export function validateConfig(plugin: PluginDefinition<unknown>, config: unknown): unknown {
  const schema: z.ZodType<unknown> | undefined = plugin.config
  if (!schema) {
    if (config !== undefined) {
      throw new AgentError(
        'PLUGIN_CONFIG_INVALID',
        `plugin '${plugin.name}' takes no config, but one was given; remove it`,
        { plugin: plugin.name, path: 'config' },
      )
    }
    return undefined
  }
  let result = schema.safeParse(config)
  // A plugin used bare gets its defaults: an absent config is read as `{}` when the schema refuses undefined.
  if (!result.success && config === undefined) result = schema.safeParse({})
  if (result.success) return result.data
  const { issues, more } = boundIssues(result.error.issues, 'config')
  const first = issues[0]!
  const others = issues.length - 1 + more
  throw new AgentError(
    'PLUGIN_CONFIG_INVALID',
    `plugin '${plugin.name}': ${first.path}: ${first.message}${
      others > 0 ? ` (and ${others} more)` : ''
    }; fix the plugin's config in the preset or the createAgent call`,
    { plugin: plugin.name, path: first.path, issues },
  )
}
