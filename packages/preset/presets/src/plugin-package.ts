// Plugins Keel does not ship, loaded by package: a preset's `use: "@acme/notes"` (a package
// name, found in the project's node_modules — or a parent's, as Node resolves — then in
// $KEEL_HOME/node_modules) or `use: "./plugins/notes"` (a directory, relative to the project
// for a project preset and to $KEEL_HOME for a user preset). The package's main module is
// imported (which registers its events, from its generated module) and must export the plugin
// definition as its default export, named as the package; its version is the package's.
import { existsSync } from 'node:fs'
import { readFile, realpath } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { PluginDefinition } from '@keel/agent'
import { boundIssues, errorMessage } from '@keel/base'
import { getEventRegistration } from '@keel/session'
import { z } from 'zod'
import type { PluginProvider } from './catalog.js'

/** Where a package `use` name is looked up. */
export interface PackageSearch {
  /** The project: `<project>/node_modules`, then each parent directory's, as Node resolves. */
  readonly projectDir?: string
  /** `$KEEL_HOME`: `<home>/node_modules`, after the project's. */
  readonly keelHome?: string
}

/** Why a plugin package could not be used (the preset problem's code and reason). */
export interface PackageProblem {
  readonly code: 'PRESET_PLUGIN_UNKNOWN' | 'PRESET_PLUGIN_INVALID'
  readonly reason: string
}

/** A loaded plugin package: its provider, or why not. */
export type PackageResult = { provider: PluginProvider } | { problem: PackageProblem }

/** An npm package name (`notes`, `@acme/notes`): what `use` looks up in node_modules. */
export function isPackageName(use: string): boolean {
  return /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/u.test(use)
}

/** A relative directory (`./plugins/notes`, `../notes`): what `use` takes as a path. */
export function isRelativePath(use: string): boolean {
  return use === '.' || use === '..' || use.startsWith('./') || use.startsWith('../')
}

/** The directories `name` is looked for in, in order. */
function searchDirs(name: string, search: PackageSearch): string[] {
  const dirs: string[] = []
  if (search.projectDir !== undefined) {
    for (let dir = resolve(search.projectDir); ; dir = dirname(dir)) {
      dirs.push(join(dir, 'node_modules', name))
      if (dirname(dir) === dir) break
    }
  }
  if (search.keelHome !== undefined) dirs.push(join(resolve(search.keelHome), 'node_modules', name))
  return dirs
}

const CONDITIONS = new Set(['node', 'import', 'default'])

/** The main module of a package from its `exports` (conditions node, import, default) or `main`. */
function entryOf(manifest: Manifest): string | undefined {
  const pick = (value: unknown): string | undefined => {
    if (typeof value === 'string') return value
    if (Array.isArray(value)) return value.map(pick).find((v) => v !== undefined)
    if (value === null || typeof value !== 'object') return undefined
    const map = value as Record<string, unknown>
    if (Object.keys(map).some((k) => k.startsWith('.'))) return pick(map['.'])
    for (const [condition, target] of Object.entries(map)) {
      if (!CONDITIONS.has(condition)) continue
      const found = pick(target)
      if (found !== undefined) return found
    }
    return undefined
  }
  if (manifest.exports !== undefined) return pick(manifest.exports)
  return manifest.main ?? 'index.js'
}

const manifestSchema = z.looseObject({
  name: z.string().min(1),
  version: z.string().min(1),
  description: z.string().optional(),
  main: z.string().optional(),
  exports: z.unknown().optional(),
})
type Manifest = z.infer<typeof manifestSchema>

const isFunction = (v: unknown) => typeof v === 'function'
/** What a plugin definition is (`definePlugin` returns it as given): checked on what a package exports. */
const definitionSchema = z.looseObject({
  name: z.string().min(1),
  config: z
    .custom<z.ZodType<unknown>>(
      (v) => v !== null && typeof v === 'object' && isFunction((v as { safeParse?: unknown }).safeParse),
      'must be a zod schema',
    )
    .optional(),
  events: z.array(z.string()).optional(),
  provides: z.array(z.string()).optional(),
  requires: z.array(z.string()).optional(),
  optional: z.array(z.string()).optional(),
  tools: z.array(z.unknown()).optional(),
  setup: z.custom<() => unknown>(isFunction, 'must be a function').optional(),
})

/** The main module of the `@keel/session` this Keel runs (its registry is the one that counts). */
const ourSession = createRequire(import.meta.url).resolve('@keel/session')

/** Where the package's own `@keel/session` is, when it is not the one this Keel runs (a second copy). */
async function otherSession(dir: string): Promise<string | undefined> {
  for (let at = dir; ; at = dirname(at)) {
    const candidate = join(at, 'node_modules', '@keel', 'session')
    if (existsSync(candidate)) {
      const real = await realpath(candidate)
      return ourSession.startsWith(`${real}/`) ? undefined : real
    }
    if (dirname(at) === at) return undefined
  }
}

const invalid = (reason: string): PackageResult => ({ problem: { code: 'PRESET_PLUGIN_INVALID', reason } })

/**
 * Imports the package in `dir` and checks it against the contract (see the module comment).
 * A package whose name `known` already has (loaded from elsewhere, or shipped) is not imported:
 * the provider known is returned when it came from the same directory, else a problem.
 */
export async function importPluginPackage(
  dir: string,
  use: string,
  known?: ReadonlyMap<string, PluginProvider>,
): Promise<PackageResult> {
  let manifest: Manifest
  try {
    const parsed = manifestSchema.safeParse(JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')))
    if (!parsed.success) {
      const issue = boundIssues(parsed.error.issues).issues[0]!
      return invalid(`${join(dir, 'package.json')}: ${issue.path || '(root)'}: ${issue.message}`)
    }
    manifest = parsed.data
  } catch (error) {
    return invalid(`cannot read ${join(dir, 'package.json')}: ${errorMessage(error)}`)
  }
  const label = `package ${manifest.name} (${dir})`
  if (isPackageName(use) && manifest.name !== use)
    return invalid(`${label} is named ${manifest.name}, not ${use}`)
  const same = known?.get(manifest.name)
  if (same?.source === dir) return { provider: same }
  if (same !== undefined)
    return invalid(
      same.source === undefined
        ? `the package at ${dir} is named ${manifest.name}, which Keel ships; give it another name`
        : `plugin ${manifest.name} is already loaded from ${same.source}; ${dir} is another copy`,
    )
  const entry = entryOf(manifest)
  if (entry === undefined) return invalid(`${label} exports no main module ("exports" has no "." for import)`)
  let module: { default?: unknown }
  try {
    module = (await import(pathToFileURL(join(dir, entry)).href)) as { default?: unknown }
  } catch (error) {
    const ts =
      (error as { code?: unknown } | null)?.code === 'ERR_UNKNOWN_FILE_EXTENSION'
        ? ' (its main module is TypeScript: build the package, or run keel from a Keel checkout, which loads TypeScript)'
        : ''
    return invalid(`cannot import ${label} from ${entry}: ${errorMessage(error)}${ts}`)
  }
  const exported = module.default
  if (exported === undefined)
    return invalid(
      `${label} has no default export; its main module must \`export default\` the plugin definition (definePlugin({ … }))`,
    )
  if (typeof exported === 'function')
    return invalid(
      `${label}'s default export is a function; export the plugin definition itself (definePlugin({ … }))`,
    )
  const checked = definitionSchema.safeParse(exported)
  if (!checked.success) {
    const issue = boundIssues(checked.error.issues).issues[0]!
    return invalid(
      `${label}'s default export is not a plugin definition: ${issue.path || '(root)'}: ${issue.message}`,
    )
  }
  const definition = exported as PluginDefinition<unknown>
  if (definition.name !== manifest.name)
    return invalid(
      `${label} exports plugin '${definition.name}'; a plugin is named as its package (${manifest.name})`,
    )
  for (const type of definition.events ?? []) {
    const registration = getEventRegistration(type)
    if (registration?.owner === manifest.name) continue
    if (registration)
      return invalid(`${label} declares event '${type}', which ${registration.owner} registered`)
    const other = await otherSession(dir)
    return invalid(
      other === undefined
        ? `${label} declares event '${type}' but importing it registered no validator for it: its main module must import its generated module (pnpm gen-persistence-catalog --package ${dir})`
        : `${label} declares event '${type}' but registered it with another copy of @keel/session (${other}); make @keel/session a peer dependency, resolved to the one keel runs`,
    )
  }
  const provider: PluginProvider = {
    use: manifest.name,
    version: manifest.version,
    config: definition.config ?? z.strictObject({}),
    description: manifest.description ?? `plugin ${manifest.name}`,
    source: dir,
    create: () => definition,
  }
  return { provider }
}

/**
 * Finds and imports the plugin package a preset's `use` names: a package name in the project's
 * node_modules (or a parent's), then `$KEEL_HOME`'s; or a relative directory from `base`.
 */
export async function loadPluginPackage(
  use: string,
  search: PackageSearch,
  base?: string,
  known?: ReadonlyMap<string, PluginProvider>,
): Promise<PackageResult> {
  if (isRelativePath(use)) {
    if (base === undefined)
      return {
        problem: {
          code: 'PRESET_PLUGIN_UNKNOWN',
          reason: `a relative plugin path (${use}) is only accepted in preset files`,
        },
      }
    const dir = resolve(base, use)
    if (!existsSync(join(dir, 'package.json')))
      return {
        problem: {
          code: 'PRESET_PLUGIN_UNKNOWN',
          reason: `no plugin package at ${dir} (relative to ${base}): no package.json there`,
        },
      }
    return importPluginPackage(await realpath(dir), use, known)
  }
  const found = searchDirs(use, search).find((d) => existsSync(join(d, 'package.json')))
  if (found === undefined) {
    const places = [
      ...(search.projectDir === undefined
        ? []
        : [
            `${join(resolve(search.projectDir), 'node_modules', use)} (or a parent directory's node_modules)`,
          ]),
      ...(search.keelHome === undefined ? [] : [join(resolve(search.keelHome), 'node_modules', use)]),
    ]
    return {
      problem: {
        code: 'PRESET_PLUGIN_UNKNOWN',
        reason: `no installed plugin ${JSON.stringify(use)}: Keel does not ship it, and there is no package ${places.length === 0 ? 'to look in (no project or KEEL_HOME given)' : places.join(' or ')}`,
      },
    }
  }
  return importPluginPackage(await realpath(found), use, known)
}
