// `--package <dir>`: the generator for a plugin package outside the repository (a third-party
// plugin). The package is loaded with the repository's packages (its `@keel/*` imports read
// the repository's sources), its events are treated like a test fixture's — validators
// generated into its own `src/events.generated.ts`, nothing added to the repository's catalog
// — and only files inside the package are written or compared.
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { generateCatalog } from './generate.js'
import type { LoadedProject } from './workspace.js'

/** What a run for outside packages found: a line per file, and what fails the run (a stale file, a package without events). */
export interface OutsideResult {
  lines: string[]
  failed: string[]
}

/**
 * Generates the files of the outside packages `loaded` holds (see `loadProject`'s `outside`)
 * and writes those that changed — or, with `check`, writes nothing and lists them in `failed`.
 * Throws `CatalogError` when the sources have problems (the repository's included: the
 * outside package's events are checked against the same rules).
 */
export function generateOutside(root: string, loaded: LoadedProject, check: boolean): OutsideResult {
  const outside = loaded.packages.filter((p) => p.outside)
  const gen = generateCatalog({ root, loaded })
  const lines: string[] = []
  const failed: string[] = []
  for (const pkg of outside) {
    const files = Object.entries(gen.files).filter(([path]) => path.startsWith(`${pkg.dir}/`))
    if (files.length === 0) {
      lines.push(
        `${pkg.name} (${join(root, pkg.dir)}) declares no events: merge them into @keel/session's SessionEventMap in its src/ (see docs/guides/writing-a-plugin.md)`,
      )
      failed.push(pkg.dir)
      continue
    }
    for (const [path, text] of files) {
      const abs = join(root, path)
      const near = relative(process.env.INIT_CWD ?? process.cwd(), abs)
      const shown = near === '' || near.startsWith('..') ? abs : near
      const current = existsSync(abs) ? readFileSync(abs, 'utf8') : undefined
      if (current === text) {
        lines.push(`${shown} is up to date (${pkg.name})`)
        continue
      }
      if (check) {
        failed.push(path)
        lines.push(
          `${shown} ${current === undefined ? 'is missing' : 'differs from the sources'}: run pnpm gen-persistence-catalog --package ${join(root, pkg.dir)}`,
        )
        continue
      }
      writeFileSync(abs, text)
      lines.push(`wrote ${shown} (${pkg.name})`)
    }
  }
  return { lines, failed }
}
