import { isKeelError } from '@keel/base'
import {
  addRecordedPlugins,
  loadPresetReport,
  type PluginCatalog,
  PresetError,
  recordedComposition,
} from '@keel/presets'
import { type ExistingSession, openExisting, type SessionChoice } from './open-session.js'
import { pluginSearch } from './plugin-search.js'
import type { SelectedStore } from './store.js'

/**
 * Opens the session `keel resume`/`keel fork` continues when its log may hold events of
 * plugin packages (plugins Keel does not ship), whose validators register only once the
 * package is imported. `known` holds what is imported already (the presets of the directory
 * `keel` runs in). When the log has an event no loaded plugin owns
 * (`UNKNOWN_REQUIRED_EVENT`), the log is read as it is, the plugins its composition records
 * are loaded — from the presets of the session's directory, then by package name from that
 * project and `$KEEL_HOME` — and it is opened again. A recorded plugin that cannot be loaded
 * is `COMPOSITION_UNAVAILABLE` naming it and why; nothing is written.
 */
export async function openWithPlugins(
  choice: SessionChoice,
  selected: SelectedStore,
  where: Parameters<typeof openExisting>[2],
  home: string,
  known: PluginCatalog,
): Promise<ExistingSession> {
  try {
    return await openExisting(choice, selected, where)
  } catch (error) {
    if (!isKeelError(error) || error.code !== 'UNKNOWN_REQUIRED_EVENT') throw error
    const id = String(error.details.id)
    const view = await selected.store.inspect(id)
    const composition = recordedComposition(view)
    if (composition === undefined) throw error
    const dir = where.explicit ?? view.header.cwd ?? where.invocation
    const catalog = new Map(known)
    for (const [name, provider] of (await loadPresetReport(pluginSearch(home, dir))).catalog)
      if (!catalog.has(name)) catalog.set(name, provider)
    const missing = await addRecordedPlugins(
      catalog,
      composition.plugins.map((p) => p.name),
      pluginSearch(home, dir),
    )
    const gone = composition.plugins.filter((p) => !catalog.has(p.name))
    if (gone.length === 0) return openExisting(choice, selected, where)
    const list = gone
      .map((p) => `${p.name} ${p.version}${missing.has(p.name) ? ` (${missing.get(p.name)})` : ''}`)
      .join('; ')
    throw new PresetError(
      'COMPOSITION_UNAVAILABLE',
      `session ${id} cannot be read without the plugin${gone.length === 1 ? '' : 's'} it ran with, which ${gone.length === 1 ? 'is' : 'are'} not installed: ${list}. Its log holds ${String(error.details.type)} at seq ${String(error.details.seq)}. Install ${gone.length === 1 ? 'it' : 'them'}, or read the log as stored with keel sessions show ${id}`,
      { session: id, plugins: gone.map((p) => p.name), type: error.details.type },
      { cause: error },
    )
  }
}
