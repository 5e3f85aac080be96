import type { PackageSearch } from '@keel/presets'

let registered: Promise<void> | undefined

/**
 * Registers tsx's loader in this process (once), so a plugin package whose main module is
 * TypeScript — one scaffolded by `pnpm new-plugin --dir` and not built — can be imported.
 * Only then: the bundle does not pay for a loader it rarely needs.
 */
function loadTypeScript(): Promise<void> {
  registered ??= import('tsx/esm/api').then(({ register }) => {
    register()
  })
  return registered
}

/** Where `keel` looks for plugin packages of `projectDir` and `keelHome`, TypeScript ones included. */
export function pluginSearch(keelHome: string, projectDir: string): PackageSearch {
  return { keelHome, projectDir, loadTypeScript }
}
