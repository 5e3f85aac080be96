// Growing a plugin catalog with the packages presets (or a recorded composition) name: each
// `use` the catalog does not know is loaded as a package (plugin-package.ts) and added under
// its plugin's name, and a preset's relative `use` is rewritten to that name — so a session
// records `@acme/notes`, never a path.
import type { PluginProvider } from './catalog.js'
import {
  isPackageName,
  loadPluginPackage,
  type PackageProblem,
  type PackageSearch,
} from './plugin-package.js'
import type { Preset } from './preset.js'

/** One `use` that could not be loaded: where in the preset, and why. */
export interface ReferenceProblem extends PackageProblem {
  /** `['plugins', i, 'use']`. */
  readonly keys: ReadonlyArray<PropertyKey>
  /** The package or path named. */
  readonly plugin: string
}

/**
 * Loads every plugin of `preset` that `catalog` does not know as a package (a name from
 * `search`, a relative path from `base`), adds it to `catalog`, and returns the preset with
 * each relative `use` replaced by the plugin's name — and a problem per `use` that failed.
 */
export async function addPackageReferences(
  preset: Preset,
  catalog: Map<string, PluginProvider>,
  search: PackageSearch,
  base: string,
): Promise<{ preset: Preset; problems: ReferenceProblem[] }> {
  const problems: ReferenceProblem[] = []
  const plugins = [...preset.plugins]
  for (const [i, ref] of preset.plugins.entries()) {
    if (catalog.has(ref.use)) continue
    const loaded = await loadPluginPackage(ref.use, search, base, catalog)
    if ('problem' in loaded) {
      problems.push({ ...loaded.problem, keys: ['plugins', i, 'use'], plugin: ref.use })
      continue
    }
    catalog.set(loaded.provider.use, loaded.provider)
    plugins[i] = { ...ref, use: loaded.provider.use }
  }
  return { preset: { ...preset, plugins }, problems }
}

/**
 * Adds the recorded plugins `names` that `catalog` lacks, looked up by package name (a
 * resumed session whose preset file is gone or elsewhere). Returns why each one failed,
 * by name; a name that is no package name is left for the caller to report.
 */
export async function addRecordedPlugins(
  catalog: Map<string, PluginProvider>,
  names: readonly string[],
  search: PackageSearch,
): Promise<Map<string, string>> {
  const failed = new Map<string, string>()
  for (const name of names) {
    if (catalog.has(name) || !isPackageName(name)) continue
    const loaded = await loadPluginPackage(name, search, undefined, catalog)
    if ('problem' in loaded) failed.set(name, loaded.problem.reason)
    else catalog.set(loaded.provider.use, loaded.provider)
  }
  return failed
}
