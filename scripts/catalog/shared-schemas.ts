// Validators of types declared in a package that owns no events (the model's messages in
// `@keel/llm`): generated once, into that package's `src/schemas.generated.ts`, which its
// index re-exports; every `events.generated.ts` whose payloads reach one of them imports it
// from there instead of defining its own copy, and the package itself writes none by hand.
// Which types: the named types declared there that the catalog's events or the session
// header reach — so the module never depends on a fixture or an outside package.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { reachableFrom } from './canonical.js'
import type { CatalogProblem } from './errors.js'
import type { SourceModel } from './model.js'
import type { WorkspacePackage } from './workspace.js'
import { constNameOf, renderDef, validatorSource } from './zod-exprs.js'

/** The generated validators of a package without events, relative to the package directory. */
export const SCHEMAS_FILE = 'src/schemas.generated.ts'
/** How the package's `src/index.ts` must re-export them (checked at gen). */
const REEXPORT = "export * from './schemas.generated.js'"

/** A validator one package exports to the generated modules of others. */
export interface SharedSchema {
  readonly pkg: WorkspacePackage
  /** The exported const (`textBlockSchema`). */
  readonly name: string
}

/**
 * The classes whose validator a package without events exports: named types declared in
 * its `src/` (a declaration of that name there, and a node of the class there) and reached
 * from the catalog's events or the header. Keyed by class id.
 */
export function sharedSchemas(
  model: SourceModel,
  packages: readonly WorkspacePackage[],
  owners: ReadonlySet<string>,
): Map<number, SharedSchema> {
  const candidates = packages.filter((p) => !p.fixture && !p.outside && !owners.has(p.name))
  const inSrc = (pkg: WorkspacePackage, path: string) => path.startsWith(`${pkg.dir}/src/`)
  const declared = Object.keys(model.typeDecls).map((ref) => {
    const at = ref.lastIndexOf('#')
    return { path: ref.slice(0, at), name: ref.slice(at + 1) }
  })
  const roots = [...model.events.map((e) => e.rootClass), ...(model.header ? [model.header.classId] : [])]
  const out = new Map<number, SharedSchema>()
  const taken = new Map<string, Set<string>>()
  for (const c of [...reachableFrom(model.canonical, roots)].sort((a, b) => a - b)) {
    let name = constNameOf(model, c)
    if (name === undefined) continue
    const cls = model.canonical.classes[c]!
    const pkg = candidates.find(
      (p) =>
        cls.sources.some((s) => inSrc(p, s)) &&
        declared.some((d) => inSrc(p, d.path) && cls.names.includes(d.name)),
    )
    if (!pkg) continue
    const names = taken.get(pkg.name) ?? new Set<string>()
    if (names.has(name)) name = `${name}_${cls.digest.slice(0, 8)}`
    names.add(name)
    taken.set(pkg.name, names)
    out.set(c, { pkg, name })
  }
  return out
}

/** The `import { … } from '<pkg>'` lines for the shared validators `imports` uses, one per package. */
export function importLines(shared: ReadonlyMap<number, SharedSchema>, imports: ReadonlyMap<number, string>) {
  const byPkg = new Map<string, string[]>()
  for (const c of imports.keys()) {
    const s = shared.get(c)!
    byPkg.set(s.pkg.name, [...(byPkg.get(s.pkg.name) ?? []), s.name])
  }
  return [...byPkg.entries()]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([pkg, names]) => `import { ${[...names].sort().join(', ')} } from '${pkg}'`)
}

function dependsOn(root: string, pkg: WorkspacePackage, dep: string): boolean {
  const manifest = JSON.parse(readFileSync(join(root, pkg.dir, 'package.json'), 'utf8')) as Record<
    string,
    Record<string, string> | undefined
  >
  return [manifest.dependencies, manifest.peerDependencies].some((d) => d !== undefined && dep in d)
}

/**
 * Problems of a generated module that imports shared validators: the importing package must
 * depend on each package it imports from (`dependencies` or `peerDependencies`).
 */
export function importProblems(
  root: string,
  importer: WorkspacePackage,
  shared: ReadonlyMap<number, SharedSchema>,
  imports: ReadonlyMap<number, string>,
): CatalogProblem[] {
  const problems: CatalogProblem[] = []
  const seen = new Set<string>()
  for (const c of imports.keys()) {
    const from = shared.get(c)!.pkg
    if (seen.has(from.name) || from.name === importer.name) continue
    seen.add(from.name)
    if (dependsOn(root, importer, from.name)) continue
    problems.push({
      code: 'SOURCE_HAS_ERRORS',
      loc: `${importer.dir}/package.json:1`,
      message: `${importer.dir}/package.json:1: the events of ${importer.name} reach types declared in ${from.name} (${shared.get(c)!.name}); add ${from.name} to its dependencies: the generated validators import them from there`,
    })
  }
  return problems
}

/**
 * Every package-without-events' `src/schemas.generated.ts`, path relative to the root →
 * content. Throws nothing; returns the problems (a package whose index does not re-export the
 * module, a refinement that needs `@keel/session`'s helpers below it).
 */
export function renderSharedSchemas(
  model: SourceModel,
  shared: ReadonlyMap<number, SharedSchema>,
): { files: Record<string, string>; problems: CatalogProblem[] } {
  const files: Record<string, string> = {}
  const problems: CatalogProblem[] = []
  const byPkg = new Map<string, { pkg: WorkspacePackage; classes: number[] }>()
  for (const [c, s] of shared) {
    const entry = byPkg.get(s.pkg.name) ?? { pkg: s.pkg, classes: [] }
    entry.classes.push(c)
    byPkg.set(s.pkg.name, entry)
  }
  for (const { pkg, classes } of byPkg.values()) {
    const own = new Map(classes.map((c) => [c, shared.get(c)!.name]))
    const others = new Map([...shared].filter(([c]) => !own.has(c)).map(([c, s]) => [c, s.name]))
    const source = validatorSource(model, classes, { names: own, imported: others })
    const index = join(model.root, pkg.dir, 'src', 'index.ts')
    if (!existsSync(index) || !readFileSync(index, 'utf8').includes(REEXPORT)) {
      problems.push({
        code: 'SOURCE_HAS_ERRORS',
        loc: `${pkg.dir}/src/index.ts:1`,
        message: `${pkg.dir}/src/index.ts:1: ${pkg.name} declares types that persisted events reach; its index must re-export their generated validators: ${REEXPORT}`,
      })
    }
    problems.push(...importProblems(model.root, pkg, shared, source.imports))
    for (const p of source.problems)
      problems.push({
        code: 'NON_PERSISTABLE_TYPE',
        loc: `${pkg.dir}/src:1`,
        message: `${pkg.dir}/src: ${p}`,
      })
    if (source.helpers.size > 0) {
      problems.push({
        code: 'NON_PERSISTABLE_TYPE',
        loc: `${pkg.dir}/src:1`,
        message: `${pkg.dir}/src: a type of ${pkg.name} uses @uniqueItems or @uniqueBy, whose runtime check lives in @keel/session; declare it in a package that owns events`,
      })
    }
    const lines = [
      '// GENERATED by `pnpm gen-persistence-catalog` — do not edit. The validators of the types this',
      '// package declares that persisted events reach: the generated event validators of every',
      '// package import them from here. Each is the declared type with the refinements of its JSDoc',
      '// tags; change the declaration and regenerate.',
      ...importLines(shared, source.imports),
      `import { z } from 'zod'`,
      '',
      ...source.defs.map(renderDef),
    ]
    files[`${pkg.dir}/${SCHEMAS_FILE}`] = lines.join('\n').replace(/\n{3,}/g, '\n\n')
  }
  return { files, problems }
}
