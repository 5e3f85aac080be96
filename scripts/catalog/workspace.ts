// The workspace as the catalog sees it: the packages under `packages/<group>/<name>` (and
// their test fixture packages), and the one ts-morph Project a run loads them into.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join, relative, sep } from 'node:path'
import { Project, ts } from 'ts-morph'

/** A workspace package found under `packages/<group>/<name>`. */
export interface WorkspacePackage {
  name: string
  /** Directory relative to the root, `/`-separated. */
  dir: string
  /** Absolute path of `src/index.ts`. */
  entry: string
  /**
   * A test fixture package (`packages/<group>/<name>/tests/fixtures/<f>`) or a package outside
   * the repository: its validators are generated like any package's, but its events are not
   * part of the catalog.
   */
  fixture?: true
  /**
   * A package outside the repository's `packages/` (`--package <dir>`: a third-party plugin),
   * loaded with the repository's packages it imports. Also a {@link fixture}. Its `dir` is
   * relative to the root (it may start with `..`).
   */
  outside?: true
}

export interface LoadOptions {
  /** Repository root (holds `packages/<group>/<name>`). */
  root: string
  /** The module that declares `SessionEventMap`. Default `@keel/session`. */
  sessionModule?: string
}

export interface LoadedProject {
  root: string
  project: Project
  packages: WorkspacePackage[]
}

export const posix = (p: string) => p.split(sep).join('/')

/** Finds `packages/<group>/<name>/package.json` under `root`, sorted by directory. */
export function findPackages(root: string): WorkspacePackage[] {
  const out: WorkspacePackage[] = []
  const base = join(root, 'packages')
  if (!existsSync(base)) return out
  for (const group of readdirSync(base, { withFileTypes: true })) {
    if (!group.isDirectory()) continue
    for (const pkg of readdirSync(join(base, group.name), { withFileTypes: true })) {
      if (!pkg.isDirectory()) continue
      const dir = join(base, group.name, pkg.name)
      const manifest = join(dir, 'package.json')
      if (!existsSync(manifest)) continue
      const name = (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name
      if (!name) continue
      out.push({ name, dir: posix(relative(root, dir)), entry: join(dir, 'src', 'index.ts') })
      const fixtures = join(dir, 'tests', 'fixtures')
      if (!existsSync(fixtures)) continue
      for (const f of readdirSync(fixtures, { withFileTypes: true })) {
        const fdir = join(fixtures, f.name)
        const fmanifest = join(fdir, 'package.json')
        if (!f.isDirectory() || !existsSync(fmanifest) || !existsSync(join(fdir, 'src', 'index.ts'))) continue
        const fname = (JSON.parse(readFileSync(fmanifest, 'utf8')) as { name?: string }).name
        if (fname)
          out.push({
            name: fname,
            dir: posix(relative(root, fdir)),
            entry: join(fdir, 'src', 'index.ts'),
            fixture: true,
          })
      }
    }
  }
  return out.sort((a, b) => (a.dir < b.dir ? -1 : a.dir > b.dir ? 1 : 0))
}

/**
 * Packages outside the repository's `packages/<group>/<name>` (absolute directories, each with
 * a `package.json` naming it and a `src/index.ts`). Throws `Error` naming the directory when
 * one is not such a package, or is one of the repository's own.
 */
export function outsidePackages(root: string, dirs: readonly string[]): WorkspacePackage[] {
  const own = findPackages(root)
  return dirs.map((abs) => {
    const manifest = join(abs, 'package.json')
    if (!existsSync(manifest)) throw new Error(`--package ${abs}: no package.json there`)
    const name = (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: unknown }).name
    if (typeof name !== 'string' || name === '') throw new Error(`--package ${abs}: package.json has no name`)
    const entry = join(abs, 'src', 'index.ts')
    if (!existsSync(entry))
      throw new Error(`--package ${abs}: no src/index.ts (the entry the generator reads)`)
    const dir = posix(relative(root, abs))
    const same = own.find((p) => p.name === name || p.dir === dir)
    if (same)
      throw new Error(
        `--package ${abs}: ${name} is the repository's own package ${same.dir}; plain \`pnpm gen-persistence-catalog\` covers it`,
      )
    return { name, dir, entry, fixture: true, outside: true }
  })
}

/** Sources a package may declare events in: `.ts`, `.mts`, `.cts` and their `.d.` forms; no tests. */
const SOURCE_FILE = /\.(?:d\.)?[mc]?ts$/
const TEST_FILE = /\.(test|spec|bench)\.[mc]?ts$/

function listSources(dir: string, out: string[]): void {
  if (!existsSync(dir)) return
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'dist') listSources(p, out)
    } else if (SOURCE_FILE.test(e.name) && !TEST_FILE.test(e.name)) {
      out.push(p)
    }
  }
}

/** A bare module specifier that is not a workspace package (an npm import). */
function isNpmSpecifier(name: string, workspace: ReadonlySet<string>): boolean {
  if (name.startsWith('.') || name.startsWith('/') || name.startsWith('node:'))
    return name.startsWith('node:')
  const pkg = name.startsWith('@') ? name.split('/').slice(0, 2).join('/') : name.split('/')[0]!
  return !workspace.has(pkg)
}

/**
 * Creates the one Project used for a run: every package's sources (no tests), workspace
 * package names mapped to their `src/index.ts`, relative imports followed. npm imports (zod,
 * openai, node) are never resolved — in every run, so the output never depends on a loading
 * mode: a persisted type must be declared in this repository, and a payload that reaches an
 * npm type is refused (it shows up as `any`). Creating the program dominates the run time, so
 * build it once and reuse it.
 */
export function loadProject(root: string, options: { outside?: readonly string[] } = {}): LoadedProject {
  const packages = [...findPackages(root), ...outsidePackages(root, options.outside ?? [])]
  const paths: Record<string, string[]> = {}
  for (const p of packages) paths[p.name] = [p.entry]
  const workspace = new Set(packages.map((p) => p.name))
  const compilerOptions: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2023.d.ts'],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    types: [],
    noEmit: true,
    skipLibCheck: true,
    allowImportingTsExtensions: false,
    paths,
  }
  const project = new Project({
    compilerOptions,
    skipAddingFilesFromTsConfig: true,
    resolutionHost: (host, getOptions) => ({
      resolveModuleNames: (names, containingFile) =>
        names.map((name) => {
          if (isNpmSpecifier(name, workspace)) return undefined
          if (workspace.has(name)) {
            const entry = paths[name]![0]!
            return { resolvedFileName: entry, extension: ts.Extension.Ts, isExternalLibraryImport: false }
          }
          return ts.resolveModuleName(name, containingFile, getOptions(), host).resolvedModule
        }),
    }),
  })
  const files: string[] = []
  for (const p of packages) listSources(join(root, p.dir, 'src'), files)
  files.sort()
  for (const f of files) project.addSourceFileAtPath(f)
  return { root, project, packages }
}
