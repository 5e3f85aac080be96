import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { boundIssues, elide, errorMessage, formatJsonPath, readBoundedText } from '@keel/base'
import { builtinCatalog, type PluginCatalog, type PluginProvider } from './catalog.js'
import { PresetError, type PresetErrorCode } from './errors.js'
import { type LocatedJson, parseLocatedJson } from './json-locate.js'
import { addPackageReferences } from './package-catalog.js'
import type { PackageSearch } from './plugin-package.js'
import { type Preset, presetSchema } from './preset.js'
import { pluginReferenceProblems } from './resolve.js'
import { shippedPresets } from './shipped.js'

/** Where a preset came from: `shipped`, `code`, or the JSON file it was read from. */
export interface PresetSource {
  readonly preset: Preset
  readonly source: string
}

/** Options of {@link loadPresets}. */
export interface LoadPresetsOptions {
  /** `$KEEL_HOME` (default `~/.keel`): user presets in `<home>/presets/*.json`. */
  readonly keelHome?: string
  /** The project directory: project presets in `<project>/.keel/presets/*.json`. */
  readonly projectDir?: string
  /** Presets defined in code, besides the shipped ones. */
  readonly extra?: readonly Preset[]
  /** The installed plugins user presets may name. Default: Keel's own. */
  readonly catalog?: PluginCatalog
  /**
   * Whether a `use` the catalog lacks is loaded as a plugin package (a name from the project's
   * node_modules, then `$KEEL_HOME`'s; a relative path from the project or `$KEEL_HOME`).
   * Default true.
   */
  readonly packages?: boolean
}

/** Longest preset file read; a larger one is refused. */
const MAX_PRESET_BYTES = 256 * 1024

/** One problem of a preset file, located in it. */
export interface PresetFileProblem {
  readonly code: PresetErrorCode
  /** The JSON path inside the file (`$.plugins[1].config.maxInProgress`). */
  readonly path: string
  /** Where in the file (1-based; the column in UTF-16 code units), when the file could be parsed. */
  readonly line?: number
  readonly column?: number
  /** What is wrong, without file and path. */
  readonly reason: string
  /** What else the problem names (`plugin`, the `other` file of a duplicate id). */
  readonly details?: Readonly<Record<string, string>>
}

/** A preset file that was left out, with every problem found in it. */
export interface BrokenPresetFile {
  readonly file: string
  /** The preset id the file declares, when it has a readable one. */
  readonly id?: string
  readonly problems: readonly PresetFileProblem[]
}

/** What {@link loadPresetReport} found: the usable presets, and the files it left out. */
export interface PresetReport {
  readonly presets: PresetSource[]
  readonly broken: BrokenPresetFile[]
  /** The given catalog plus every plugin package the files named (pass it on to resolve and build). */
  readonly catalog: PluginCatalog
}

/** `file:line:column: path: reason` — one problem on one line. */
export function formatPresetProblem(file: string, problem: PresetFileProblem): string {
  const at = problem.line === undefined ? '' : `:${problem.line}:${problem.column}`
  return `${file}${at}: ${problem.path}: ${problem.reason}`
}

/**
 * The known presets, leaving broken files out instead of failing: the shipped ones, code
 * ones, then `$KEEL_HOME/presets/*.json` and `<project>/.keel/presets/*.json` (files in name
 * order). Every user file is checked in full — JSON syntax, the preset shape, plugin names,
 * each plugin's config, a duplicate id (a user file may not reuse a shipped id either; the
 * later file is the broken one) — and every problem of every file is reported at once,
 * located by line and column. A broken file disables only itself.
 */
export async function loadPresetReport(options: LoadPresetsOptions = {}): Promise<PresetReport> {
  const catalog = new Map(options.catalog ?? builtinCatalog())
  const search: PackageSearch = {
    ...(options.projectDir === undefined ? {} : { projectDir: options.projectDir }),
    ...(options.keelHome === undefined ? {} : { keelHome: options.keelHome }),
  }
  const presets: PresetSource[] = [
    ...shippedPresets.map((preset) => ({ preset, source: 'shipped' })),
    ...(options.extra ?? []).map((preset) => ({ preset, source: 'code' })),
  ]
  const broken: BrokenPresetFile[] = []
  const seen = new Map<string, string>()
  for (const { preset, source } of presets) {
    const earlier = seen.get(preset.id)
    if (earlier !== undefined) {
      throw new PresetError(
        'PRESET_DUPLICATE',
        `preset id ${JSON.stringify(preset.id)} in ${source} is already defined in ${earlier}: give it another id`,
        { file: source, path: '$.id', preset: preset.id, other: earlier },
      )
    }
    seen.set(preset.id, source)
  }
  // Each directory with the base its relative plugin paths start from.
  const dirs = [
    options.keelHome === undefined
      ? undefined
      : { dir: join(options.keelHome, 'presets'), base: options.keelHome },
    options.projectDir === undefined
      ? undefined
      : { dir: join(options.projectDir, '.keel', 'presets'), base: options.projectDir },
  ]
  for (const entry of dirs) {
    if (entry === undefined) continue
    const { dir, base } = entry
    const listed = await presetFiles(dir)
    if ('problem' in listed) {
      broken.push({ file: dir, problems: [listed.problem] })
      continue
    }
    for (const file of listed.files) {
      const checked = await checkPresetFile(
        file,
        catalog,
        options.packages === false ? undefined : { search, base },
      )
      const earlier = checked.preset ? seen.get(checked.preset.id) : undefined
      if (checked.preset && earlier !== undefined) {
        checked.problems.push({
          code: 'PRESET_DUPLICATE',
          path: '$.id',
          ...(checked.located?.keyAt([], 'id') ?? {}),
          reason: `preset id ${JSON.stringify(checked.preset.id)} is already defined in ${earlier}: give it another id`,
          details: { other: earlier },
        })
      }
      if (!checked.preset || checked.problems.length > 0) {
        broken.push({
          file,
          ...(checked.id === undefined ? {} : { id: checked.id }),
          problems: checked.problems,
        })
        continue
      }
      seen.set(checked.preset.id, file)
      presets.push({ preset: checked.preset, source: file })
    }
  }
  return { presets, broken, catalog }
}

/**
 * The known presets (see {@link loadPresetReport}), strictly: a broken file is a
 * {@link PresetError} with the code, file and JSON path of the first problem, whose message
 * lists every problem of every broken file, each as `file:line:column: path: reason`.
 */
export async function loadPresets(options: LoadPresetsOptions = {}): Promise<PresetSource[]> {
  const report = await loadPresetReport(options)
  if (report.broken.length > 0) throw brokenError(report.broken)
  return report.presets
}

/** One {@link PresetError} for broken files: the first problem's code and place, every problem in the message. */
export function brokenError(broken: readonly BrokenPresetFile[]): PresetError {
  const first = broken[0]!
  const problem = first.problems[0]!
  const all = broken.flatMap((b) => b.problems.map((p) => formatPresetProblem(b.file, p)))
  return new PresetError(problem.code, all.join('; '), {
    ...problem.details,
    file: first.file,
    path: problem.path,
    ...(first.id === undefined ? {} : { preset: first.id }),
    problems: all,
  })
}

async function presetFiles(dir: string): Promise<{ files: string[] } | { problem: PresetFileProblem }> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') return { files: [] }
    const why = code === 'ENOTDIR' ? 'it is not a directory' : errorMessage(error)
    return {
      problem: { code: 'PRESET_UNREADABLE', path: '$', reason: `cannot read the preset directory: ${why}` },
    }
  }
  return {
    files: names
      .filter((name) => name.endsWith('.json'))
      .sort()
      .map((name) => join(dir, name)),
  }
}

interface CheckedFile {
  preset?: Preset
  id?: string
  problems: PresetFileProblem[]
  located?: Extract<LocatedJson, { ok: true }>
}

/**
 * Reads one preset file and collects all its problems (syntax, shape, plugin names and
 * configs). With `packages`, a plugin `catalog` lacks is loaded as a package and added to it.
 */
async function checkPresetFile(
  file: string,
  catalog: Map<string, PluginProvider>,
  packages?: { search: PackageSearch; base: string },
): Promise<CheckedFile> {
  let text: string
  try {
    const read = readBoundedText(file, MAX_PRESET_BYTES)
    if (read.kind === 'too-large') {
      const reason = `the file is ${read.bytes} bytes; the limit is ${MAX_PRESET_BYTES}`
      return { problems: [{ code: 'PRESET_INVALID', path: '$', reason }] }
    }
    if (read.kind !== 'text') {
      const reason = `cannot read the file: it is ${read.kind === 'missing' ? 'gone' : `${read.what}, not a regular file`}`
      return { problems: [{ code: 'PRESET_UNREADABLE', path: '$', reason }] }
    }
    text = read.text
  } catch (error) {
    const reason = `cannot read the file: ${errorMessage(error)}`
    return { problems: [{ code: 'PRESET_UNREADABLE', path: '$', reason }] }
  }
  const located = parseLocatedJson(text)
  if (!located.ok) {
    const reason = `not valid JSON: ${located.message}`
    return { problems: [{ code: 'PRESET_INVALID', path: '$', ...located.position, reason }] }
  }
  const json = located.value
  const declared = typeof json === 'object' && json !== null ? (json as { id?: unknown }).id : undefined
  const id = typeof declared === 'string' ? declared : undefined
  const parsed = presetSchema.safeParse(json)
  if (!parsed.success) {
    const { issues: shown, more } = boundIssues(parsed.error.issues, '$')
    const problems = shown.map((bounded, i): PresetFileProblem => {
      const issue = parsed.error.issues[i]!
      const extra = issue.code === 'unrecognized_keys' ? issue.keys[0] : undefined
      const place =
        (extra === undefined ? undefined : located.keyAt(issue.path, extra)) ?? located.at(issue.path)
      return { code: 'PRESET_INVALID', path: bounded.path, ...place, reason: bounded.message }
    })
    if (more > 0) {
      problems.push({
        code: 'PRESET_INVALID',
        path: '$',
        reason: `… and ${more} more problem${more === 1 ? '' : 's'}`,
      })
    }
    return { ...(id === undefined ? {} : { id }), problems, located }
  }
  const added = packages
    ? await addPackageReferences(parsed.data, catalog, packages.search, packages.base)
    : { preset: parsed.data, problems: [] }
  const failed = new Set(added.problems.map((p) => String(p.keys[1])))
  const problems: PresetFileProblem[] = added.problems.map((p) => ({
    code: p.code,
    path: formatJsonPath(p.keys, '$'),
    ...located.at(p.keys),
    reason: p.reason,
    details: { plugin: p.plugin },
  }))
  for (const p of pluginReferenceProblems(added.preset, catalog, file)) {
    // a plugin that failed to load is reported once, with why
    if (p.error.code === 'PRESET_PLUGIN_UNKNOWN' && failed.has(String(p.keys[1]))) continue
    problems.push({
      code: p.error.code,
      path: formatJsonPath(p.keys, '$'),
      ...located.at(p.keys),
      reason: p.reason,
      ...(typeof p.error.details.plugin === 'string' ? { details: { plugin: p.error.details.plugin } } : {}),
    })
  }
  // in the order of the file
  problems.sort((a, b) => (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0))
  return { preset: added.preset, id: parsed.data.id, problems, located }
}

/** Reads and validates one preset file; throws a {@link PresetError} listing all its problems. */
export async function readPresetFile(
  file: string,
  catalog: PluginCatalog = builtinCatalog(),
): Promise<Preset> {
  const checked = await checkPresetFile(file, new Map(catalog))
  if (checked.preset && checked.problems.length === 0) return checked.preset
  throw brokenError([
    { file, ...(checked.id === undefined ? {} : { id: checked.id }), problems: checked.problems },
  ])
}

/** The preset with `id`, or `PRESET_NOT_FOUND` listing the ids there are. */
export function findPreset(presets: readonly PresetSource[], id: string): PresetSource {
  const found = presets.find((p) => p.preset.id === id)
  if (found) return found
  throw new PresetError(
    'PRESET_NOT_FOUND',
    `no preset ${JSON.stringify(elide(id))}; known presets: ${presets.map((p) => p.preset.id).join(', ')}`,
    { preset: elide(id) },
  )
}
