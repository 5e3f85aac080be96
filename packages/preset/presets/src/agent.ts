import {
  type Agent,
  type AgentOptions,
  type ApprovalAnswerer,
  createAgent,
  type PluginEntry,
  type StoreHandle,
} from '@keel/agent'
import type { AgentComposition } from '@keel/session'
import type { SessionStore } from '@keel/store'
import { builtinCatalog, type PluginCatalog } from './catalog.js'
import { presetChildSessions } from './child-sessions.js'
import { PresetError } from './errors.js'
import { findPreset, type PresetSource } from './load.js'
import { addRecordedPlugins } from './package-catalog.js'
import type { PackageSearch } from './plugin-package.js'
import type { Preset } from './preset.js'
import { buildComposition, recordedComposition, resolveComposition } from './resolve.js'
import { checkServices } from './services.js'
import { shippedPresets } from './shipped.js'
import { selectComposition } from './switch.js'

/** Options of {@link createPresetAgent}: {@link AgentOptions} minus what the preset decides. */
export interface PresetAgentOptions extends Omit<AgentOptions, 'session' | 'plugins' | 'tools' | 'model'> {
  /**
   * The preset: a shipped or loaded id, or a {@link Preset} object. For a new session it
   * is required; for an existing one it switches the composition when the session is
   * still blank, or is a fresh fork whose inherited history the preset knows
   * (`PRESET_SWITCH_UNKNOWN_EVENTS` names what it does not), and is refused
   * (`PRESET_SWITCH_NOT_BLANK`) when it differs otherwise.
   */
  preset?: string | Preset
  /**
   * A new session is created in this store (with the composition in its header), unless
   * `session` is given; either way the agent's plugins create child sessions in it
   * (`AgentOptions.sessions`, for `@keel/subagents`): pass it with `session` too.
   */
  store?: SessionStore
  /** The agent runs on this existing session (resume, fork): its recorded composition is rebuilt. */
  session?: StoreHandle
  /** The presets `preset` may name. Default: the shipped ones. */
  presets?: readonly PresetSource[]
  /** The installed plugins. Default: Keel's own. */
  catalog?: PluginCatalog
  /**
   * Where a recorded plugin the catalog lacks is looked up as a package, by name, when a
   * session is rebuilt (see {@link PackageSearch}); without it such a plugin is unavailable.
   */
  packages?: PackageSearch
  /** Interactive approval answerers (a terminal, a UI); not consulted when the composition is not interactive. */
  answerers?: readonly ApprovalAnswerer[]
  /** Overrides the preset's model (recorded in the composition of a new session). */
  model?: string
  /** Header title of a new session. */
  title?: string
  /** Extra tools besides the preset's (not recorded). */
  extraTools?: AgentOptions['tools']
}

/** What {@link createPresetAgent} built. */
export interface PresetAgent {
  readonly agent: Agent
  /** The composition the agent runs with (as recorded in the session). */
  readonly composition: AgentComposition
  /** How it came about: `created`, `rebuilt` (from the log), `switched` (blank session). */
  readonly origin: 'created' | 'rebuilt' | 'switched'
  /** The plugins as built (a UI reaches a plugin's own API through them, e.g. compaction's `compact()`). */
  readonly plugins: readonly PluginEntry[]
  /** Things worth telling the user (a plugin version that differs from the recorded one), by name. */
  readonly notices: readonly string[]
}

function presetOf(options: PresetAgentOptions): { preset: Preset; source: string } | undefined {
  if (options.preset === undefined) return undefined
  if (typeof options.preset !== 'string') return { preset: options.preset, source: 'code' }
  const presets = options.presets ?? shippedPresets.map((preset) => ({ preset, source: 'shipped' }))
  return findPreset(presets, options.preset)
}

/**
 * `createAgent` from a preset. With `store`, creates a session whose header records the
 * preset and its resolved composition (plugin names, versions, configs and digests). With
 * `session`, rebuilds exactly the composition the session recorded (the latest
 * `agent-preset/selected`, else the header's), failing with `COMPOSITION_UNAVAILABLE` —
 * naming each plugin — when a recorded plugin is gone or its config no longer validates.
 * `@keel/agent` does not depend on presets; this is the library entry.
 */
export async function createPresetAgent(options: PresetAgentOptions): Promise<PresetAgent> {
  const catalog = options.catalog ?? builtinCatalog()
  const chosen = presetOf(options)
  const resolve = (preset: Preset, source: string) =>
    resolveComposition(preset, {
      catalog,
      source,
      ...(options.model === undefined ? {} : { model: options.model }),
    })
  let handle: StoreHandle
  let composition: AgentComposition
  let origin: PresetAgent['origin']
  if (options.session !== undefined) {
    handle = options.session
    const recorded = recordedComposition(handle.session)
    if (chosen !== undefined && (recorded === undefined || recorded.preset !== chosen.preset.id)) {
      composition = resolve(chosen.preset, chosen.source)
      selectComposition(handle.session, composition, recorded?.preset)
      origin = 'switched'
    } else if (recorded !== undefined) {
      composition = recorded
      origin = 'rebuilt'
    } else {
      throw new PresetError(
        'PRESET_NOT_FOUND',
        `session ${handle.session.id} records no preset (a program made it without one); name the one to run it with: --preset coding at the command line, preset: 'coding' in code`,
        { session: handle.session.id },
      )
    }
  } else {
    if (options.store === undefined) {
      throw new PresetError('PRESET_INVALID', 'createPresetAgent needs a store (new session) or a session', {
        path: 'options',
      })
    }
    if (chosen === undefined) {
      throw new PresetError('PRESET_NOT_FOUND', 'createPresetAgent needs a preset for a new session', {
        path: 'preset',
      })
    }
    composition = resolve(chosen.preset, chosen.source)
    handle = await options.store.create({
      header: {
        cwd: options.cwd,
        agentPreset: composition.preset,
        agentComposition: composition,
        ...(options.title === undefined ? {} : { title: options.title }),
      },
    })
    origin = 'created'
  }
  const runtime = { llm: options.llm }
  let built: ReturnType<typeof buildComposition>
  // The catalog with the recorded plugin packages found by name: the children get it too.
  const grown = new Map(catalog)
  try {
    const missing = options.packages
      ? await addRecordedPlugins(
          grown,
          composition.plugins.map((p) => p.name),
          options.packages,
        )
      : undefined
    built = buildComposition(composition, runtime, {
      catalog: grown,
      where: `session ${handle.session.id}`,
      ...(missing ? { missing } : {}),
    })
    checkServices(built.plugins, grown, runtime, composition.preset)
  } catch (error) {
    if (options.session === undefined) await handle.close()
    throw error
  }
  const answerers = composition.interactive === false ? [] : (options.answerers ?? [])
  // `--model` on a resumed session runs that model without rewriting the record.
  const model = options.model ?? composition.model
  const contextWindows = { ...composition.contextWindows, ...options.contextWindows }
  const prompts = [options.systemPrompt, chosen?.preset.systemPrompt].filter((p) => p !== undefined)
  const systemPrompt = prompts.length > 0 ? prompts.join('\n\n') : undefined
  const {
    preset: _preset,
    systemPrompt: _systemPrompt,
    store: _store,
    session: _session,
    presets: _presets,
    catalog: _catalog,
    packages: _packages,
    answerers: _answerers,
    title: _title,
    extraTools,
    model: _model,
    ...rest
  } = options
  const sessions =
    options.store === undefined
      ? undefined
      : presetChildSessions(
          {
            store: options.store,
            shared: {
              llm: options.llm,
              cwd: options.cwd,
              catalog: grown,
              clock: options.clock,
              random: options.random,
              retry: options.retry,
              maxTokens: options.maxTokens,
              maxParallelTools: options.maxParallelTools,
              maxResultChars: options.maxResultChars,
            },
            composition,
            model,
          },
          createPresetAgent,
        )
  try {
    const agent = await createAgent({
      ...rest,
      session: handle,
      plugins: built.plugins,
      tools: [...built.tools, ...(extraTools ?? [])],
      answerers,
      ...(systemPrompt === undefined ? {} : { systemPrompt }),
      ...(model === undefined ? {} : { model }),
      ...(composition.toolFilter === undefined ? {} : { toolFilter: composition.toolFilter }),
      ...(sessions === undefined ? {} : { sessions }),
      ...(Object.keys(contextWindows).length === 0 ? {} : { contextWindows }),
    })
    return { agent, composition, origin, plugins: built.plugins, notices: built.notices }
  } catch (error) {
    if (options.session === undefined) await handle.close()
    throw error
  }
}
