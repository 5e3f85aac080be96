import { type PluginEntry, usePlugin } from '@keel/agent'
import { boundIssues, canonicalDigest, formatJsonPath } from '@keel/base'
import { editFileTool, fsTools, globTool, grepTool, listDirTool, readFileTool, writeFileTool } from '@keel/fs'
import { type AgentComposition, type ComposedPlugin, registerProjection, type Session } from '@keel/session'
import { bashTool } from '@keel/shell'
import type { Tool } from '@keel/tools'
import { sandboxShellTool } from '@keel/user-approval'
import { builtinCatalog, type PluginCatalog, type PluginRuntime } from './catalog.js'
import { PresetError } from './errors.js'
import type { Preset, ToolGroup } from './preset.js'

const APPROVAL = '@keel/user-approval'

/** `sha256:<hex>` of a config's canonical JSON (an absent config digests as `null`). */
export function configDigest(config: unknown): string {
  return canonicalDigest(config)
}

/** The config a plugin gets from a preset: its own, with the preset's policy merged into the approval plugin's. */
function effectiveConfig(preset: Preset, use: string, config: unknown): unknown {
  if (use !== APPROVAL || preset.policy === undefined) return config
  const base = typeof config === 'object' && config !== null ? (config as Record<string, unknown>) : {}
  return { ...base, ...preset.policy }
}

/** One problem of a preset, with the JSON path (as keys) it is about. */
export interface PresetProblem {
  readonly error: PresetError
  /** The path inside the preset, e.g. `['plugins', 1, 'config', 'maxInProgress']`. */
  readonly keys: ReadonlyArray<PropertyKey>
  /** What is wrong there, without the file and path (the error's message has them). */
  readonly reason: string
}

function validate(
  catalog: PluginCatalog,
  use: string,
  config: unknown,
  where: { file: string; path: ReadonlyArray<PropertyKey>; preset: string },
): PresetProblem[] {
  const provider = catalog.get(use)
  if (!provider) {
    const keys = [...where.path, 'use']
    const reason = `no installed plugin ${JSON.stringify(use)}; installed: ${[...catalog.keys()].join(', ')}`
    return [
      {
        keys,
        reason,
        error: new PresetError(
          'PRESET_PLUGIN_UNKNOWN',
          `preset ${JSON.stringify(where.preset)} in ${where.file}: ${formatJsonPath(keys, '$')}: ${reason}`,
          { file: where.file, path: formatJsonPath(keys, '$'), preset: where.preset, plugin: use },
        ),
      },
    ]
  }
  const parsed = provider.config.safeParse(config ?? {})
  if (parsed.success) return []
  const configProblem = (keys: ReadonlyArray<PropertyKey>, said: string): PresetProblem => {
    const path = formatJsonPath(keys, '$')
    const reason = `${said} (config of ${use})`
    return {
      keys,
      reason,
      error: new PresetError(
        'PRESET_PLUGIN_CONFIG_INVALID',
        `preset ${JSON.stringify(where.preset)} in ${where.file}: ${path}: ${reason}`,
        { file: where.file, path, preset: where.preset, plugin: use },
      ),
    }
  }
  const { issues: shown, more } = boundIssues(parsed.error.issues)
  const problems = shown.map((bounded, i) =>
    configProblem([...where.path, 'config', ...parsed.error.issues[i]!.path], bounded.message),
  )
  if (more > 0) {
    problems.push(
      configProblem([...where.path, 'config'], `… and ${more} more problem${more === 1 ? '' : 's'}`),
    )
  }
  return problems
}

/**
 * Every problem of a preset's plugin references against the installed plugins: the name
 * must be known, each plugin listed once, the config (with the preset's policy merged
 * into the approval plugin's) must validate, and a policy needs the approval plugin.
 */
export function pluginReferenceProblems(
  preset: Preset,
  catalog: PluginCatalog,
  file: string,
): PresetProblem[] {
  const problems: PresetProblem[] = []
  const seen = new Set<string>()
  preset.plugins.forEach((ref, i) => {
    if (seen.has(ref.use)) {
      const keys = ['plugins', i, 'use']
      const reason = `${ref.use} is listed twice`
      problems.push({
        keys,
        reason,
        error: new PresetError(
          'PRESET_INVALID',
          `preset ${JSON.stringify(preset.id)} in ${file}: ${formatJsonPath(keys, '$')}: ${reason}`,
          { file, path: formatJsonPath(keys, '$'), preset: preset.id, plugin: ref.use },
        ),
      })
      return
    }
    seen.add(ref.use)
    problems.push(
      ...validate(catalog, ref.use, effectiveConfig(preset, ref.use, ref.config), {
        file,
        path: ['plugins', i],
        preset: preset.id,
      }),
    )
  })
  if (preset.policy !== undefined && !seen.has(APPROVAL)) {
    problems.push({
      keys: ['policy'],
      reason: `needs the ${APPROVAL} plugin in $.plugins`,
      error: new PresetError(
        'PRESET_INVALID',
        `preset ${JSON.stringify(preset.id)} in ${file}: $.policy needs the ${APPROVAL} plugin in $.plugins`,
        { file, path: '$.policy', preset: preset.id },
      ),
    })
  }
  return problems
}

/** Throws the first of {@link pluginReferenceProblems}, if any. */
export function checkPluginReferences(preset: Preset, catalog: PluginCatalog, file: string): void {
  const [first] = pluginReferenceProblems(preset, catalog, file)
  if (first) throw first.error
}

/** Resolves a preset to the composition a session records (validating it first). */
export function resolveComposition(
  preset: Preset,
  options: { catalog?: PluginCatalog; source?: string; model?: string } = {},
): AgentComposition {
  const catalog = options.catalog ?? builtinCatalog()
  checkPluginReferences(preset, catalog, options.source ?? 'code')
  const plugins: ComposedPlugin[] = preset.plugins.map((ref) => {
    const config = effectiveConfig(preset, ref.use, ref.config)
    const entry: ComposedPlugin = {
      name: ref.use,
      version: catalog.get(ref.use)!.version,
      configDigest: configDigest(config),
    }
    if (config !== undefined) entry.config = config
    return entry
  })
  const composition: AgentComposition = { preset: preset.id, plugins, tools: [...preset.tools] }
  if (!preset.interactive) composition.interactive = false
  const model = options.model ?? preset.model
  if (model !== undefined) composition.model = model
  if (preset.contextWindows !== undefined && Object.keys(preset.contextWindows).length > 0) {
    composition.contextWindows = { ...preset.contextWindows }
  }
  return composition
}

/** What {@link buildComposition} made: the agent's plugins and tools, and anything worth saying. */
export interface BuiltComposition {
  readonly plugins: PluginEntry[]
  readonly tools: Array<Tool<unknown>>
  /** Non-fatal differences (a plugin's installed version differs from the recorded one), by name. */
  readonly notices: string[]
}

function toolsOf(groups: readonly string[], sandboxed: boolean): Array<Tool<unknown>> {
  const tools: Array<Tool<unknown>> = []
  const names = new Set<string>()
  const add = (list: Array<Tool<unknown>>) => {
    for (const tool of list) {
      if (names.has(tool.name)) continue
      names.add(tool.name)
      tools.push(tool)
    }
  }
  for (const group of groups as ToolGroup[]) {
    if (group === 'fs') add(fsTools())
    else if (group === 'fs-read') {
      add([readFileTool(), listDirTool(), globTool(), grepTool()] as Array<Tool<unknown>>)
    } else if (group === 'shell') {
      const bash = bashTool()
      add([(sandboxed ? sandboxShellTool(bash) : bash) as Tool<unknown>])
    }
  }
  return tools
}

/** Names of the write tools (so callers can show what a read-only preset leaves out). */
export const WRITE_TOOLS: readonly string[] = [writeFileTool().name, editFileTool().name]

/**
 * Builds the plugins and tools of a recorded composition, exactly as recorded: each plugin
 * by name with its recorded config. A plugin that is no longer installed, a config that no
 * longer validates, or an unknown tool group is reported — all of them, each by name — in
 * one {@link PresetError} `COMPOSITION_UNAVAILABLE`; nothing is dropped silently. A version
 * that differs from the recorded one is a notice, not an error.
 */
export function buildComposition(
  composition: AgentComposition,
  runtime: PluginRuntime,
  options: {
    catalog?: PluginCatalog
    where?: string
    /** Why a plugin the catalog lacks could not be loaded as a package, by name (said with it). */
    missing?: ReadonlyMap<string, string>
  } = {},
): BuiltComposition {
  const catalog = options.catalog ?? builtinCatalog()
  const where = options.where ?? 'the composition'
  const problems: string[] = []
  const notices: string[] = []
  const plugins: PluginEntry[] = []
  for (const recorded of composition.plugins) {
    const provider = catalog.get(recorded.name)
    if (!provider) {
      const why = options.missing?.get(recorded.name)
      problems.push(`plugin ${recorded.name} ${recorded.version} is not installed${why ? ` (${why})` : ''}`)
      continue
    }
    const parsed = provider.config.safeParse(recorded.config ?? {})
    if (!parsed.success) {
      const issue = boundIssues(parsed.error.issues, '$').issues[0]!
      problems.push(
        `the recorded config of ${recorded.name} no longer validates with ${provider.use} ${provider.version}: ${issue.path}: ${issue.message}`,
      )
      continue
    }
    if (provider.version !== recorded.version) {
      notices.push(`${recorded.name} was ${recorded.version} when recorded; ${provider.version} is installed`)
    }
    plugins.push(usePlugin(provider.create(runtime), recorded.config))
  }
  const unknownGroups = composition.tools.filter((t) => !(['fs', 'fs-read', 'shell'] as string[]).includes(t))
  for (const group of unknownGroups) problems.push(`tool group ${group} is unknown to this build`)
  if (problems.length > 0) {
    throw new PresetError(
      'COMPOSITION_UNAVAILABLE',
      `cannot rebuild preset ${JSON.stringify(composition.preset)} recorded in ${where}: ${problems.join('; ')}. Install what is missing, or start a new session with --preset.`,
      { preset: composition.preset, problems },
    )
  }
  const sandboxed = composition.plugins.some((p) => p.name === APPROVAL)
  return { plugins, tools: toolsOf(composition.tools, sandboxed), notices }
}

/**
 * The composition a session runs with: the latest `agent-preset/selected`, else the
 * header's `agentComposition`; `undefined` for a session created without a preset.
 */
export function recordedComposition(
  session: Session | Pick<Session, 'header' | 'events'>,
): AgentComposition | undefined {
  if ('project' in session) return session.project(selectedComposition) ?? session.header.agentComposition
  // a read-only view (a store's inspection): scan back for the latest switch
  for (let i = session.events.length - 1; i >= 0; i--) {
    const event = session.events[i]!
    if (event.type === 'agent-preset/selected') return event.data.composition
  }
  return session.header.agentComposition
}

/** The composition of the latest `agent-preset/selected`, folded (a checkpoint keeps it: no scan of the log). */
const selectedComposition = registerProjection<AgentComposition | null>({
  name: '@keel/presets/selected',
  init: () => null,
  apply: (selected, event) => (event.type === 'agent-preset/selected' ? event.data.composition : selected),
  checkpoint: { version: 1 },
})
