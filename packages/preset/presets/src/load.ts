import { readdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { builtinCatalog, type PluginCatalog } from './catalog.js'
import { PresetError } from './errors.js'
import { type Preset, presetSchema, shapeError } from './preset.js'
import { checkPluginReferences } from './resolve.js'
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
}

/** Longest preset file read; a larger one is refused. */
const MAX_PRESET_BYTES = 256 * 1024

/**
 * The known presets: the shipped ones, code ones, then `$KEEL_HOME/presets/*.json` and
 * `<project>/.keel/presets/*.json` (files in name order). Every user preset is validated in
 * full — shape, plugin names, each plugin's config — and a problem is a {@link PresetError}
 * naming the file and the JSON path inside it. Two presets with one id (a user file may not
 * reuse a shipped id either) are `PRESET_DUPLICATE`, naming both places.
 */
export async function loadPresets(options: LoadPresetsOptions = {}): Promise<PresetSource[]> {
  const catalog = options.catalog ?? builtinCatalog()
  const all: PresetSource[] = [
    ...shippedPresets.map((preset) => ({ preset, source: 'shipped' })),
    ...(options.extra ?? []).map((preset) => ({ preset, source: 'code' })),
  ]
  const dirs = [
    options.keelHome === undefined ? undefined : join(options.keelHome, 'presets'),
    options.projectDir === undefined ? undefined : join(options.projectDir, '.keel', 'presets'),
  ]
  for (const dir of dirs) {
    if (dir === undefined) continue
    for (const file of await presetFiles(dir))
      all.push({ preset: await readPresetFile(file, catalog), source: file })
  }
  const seen = new Map<string, string>()
  for (const { preset, source } of all) {
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
  return all
}

async function presetFiles(dir: string): Promise<string[]> {
  let names: string[]
  try {
    names = await readdir(dir)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw new PresetError(
      'PRESET_UNREADABLE',
      `cannot read preset directory ${dir}: ${(error as Error).message}`,
      {
        file: dir,
        path: '$',
      },
    )
  }
  return names
    .filter((name) => name.endsWith('.json'))
    .sort()
    .map((name) => join(dir, name))
}

/** Reads and validates one preset file (shape, plugin names, plugin configs). */
export async function readPresetFile(
  file: string,
  catalog: PluginCatalog = builtinCatalog(),
): Promise<Preset> {
  let text: string
  try {
    const bytes = await readFile(file)
    if (bytes.length > MAX_PRESET_BYTES) {
      throw new PresetError(
        'PRESET_INVALID',
        `preset file ${file} is ${bytes.length} bytes; the limit is ${MAX_PRESET_BYTES}`,
        { file, path: '$' },
      )
    }
    text = bytes.toString('utf8')
  } catch (error) {
    if (error instanceof PresetError) throw error
    throw new PresetError(
      'PRESET_UNREADABLE',
      `cannot read preset file ${file}: ${(error as Error).message}`,
      {
        file,
        path: '$',
      },
    )
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new PresetError(
      'PRESET_INVALID',
      `preset file ${file} is not valid JSON: ${(error as Error).message}`,
      {
        file,
        path: '$',
      },
    )
  }
  const id =
    typeof json === 'object' && json !== null && typeof (json as { id?: unknown }).id === 'string'
      ? (json as { id: string }).id
      : '?'
  const parsed = presetSchema.safeParse(json)
  if (!parsed.success) throw shapeError(parsed.error, file, id)
  checkPluginReferences(parsed.data, catalog, file)
  return parsed.data
}

/** The preset with `id`, or `PRESET_NOT_FOUND` listing the ids there are. */
export function findPreset(presets: readonly PresetSource[], id: string): PresetSource {
  const found = presets.find((p) => p.preset.id === id)
  if (found) return found
  throw new PresetError(
    'PRESET_NOT_FOUND',
    `no preset ${JSON.stringify(id)}; known presets: ${presets.map((p) => p.preset.id).join(', ')}`,
    { preset: id },
  )
}
