import type { PluginEntry } from '@keel/agent'
import type { PluginCatalog, PluginRuntime } from './catalog.js'
import { PresetError } from './errors.js'

/**
 * Refuses a composition in which a plugin requires a service no plugin of it provides,
 * before any plugin is set up, naming the plugin, the key and — when one is installed —
 * the plugin that would provide it (`PRESET_SERVICE_MISSING`). The agent checks the same
 * at setup; this says what to add to the preset.
 */
export function checkServices(
  plugins: readonly PluginEntry[],
  catalog: PluginCatalog,
  runtime: PluginRuntime,
  preset: string,
): void {
  const definitions = plugins.map((entry) => ('plugin' in entry ? entry.plugin : entry))
  const provided = new Set(definitions.flatMap((d) => d.provides ?? []))
  for (const definition of definitions) {
    for (const key of definition.requires ?? []) {
      if (provided.has(key)) continue
      const provider = [...catalog.values()].find((p) => (p.create(runtime).provides ?? []).includes(key))
      const hint = provider
        ? `, provided by plugin '${provider.use}', which preset ${JSON.stringify(preset)} does not include; add { "use": "${provider.use}" } to it`
        : '; no installed plugin provides it'
      throw new PresetError(
        'PRESET_SERVICE_MISSING',
        `plugin '${definition.name}' requires service '${key}'${hint}`,
        { preset, plugin: definition.name, key, ...(provider ? { provider: provider.use } : {}) },
      )
    }
  }
}
