import type { PackageSearch } from '@keel/presets'

/**
 * Where `keel` looks for plugin packages: `projectDir`'s node_modules (and its parents'),
 * then `keelHome`'s. A run that may load one runs from the sources, not the bundle (see
 * `bin/plugin-packages.js`), so the package and Keel share one copy of each @keel package.
 */
export function pluginSearch(keelHome: string, projectDir: string): PackageSearch {
  return { keelHome, projectDir }
}
