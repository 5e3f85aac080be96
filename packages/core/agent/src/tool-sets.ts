// Tools that change between steps. A plugin whose tools come and go while the agent runs
// (the tools of MCP servers) asks for a `ToolSet` and replaces its content whenever it
// likes; the agent takes the sets into its registry only at step boundaries, so within one
// step the model, the permission chain and the dispatch all see the same tools. Each change
// of what the model is offered is logged (`tool/list-changed`, the whole set of one plugin,
// latest wins), and compared with the log, not with memory, so a resumed agent notices a
// tool that went or changed while the session was closed.
import { createHash } from 'node:crypto'
import { canonicalJson, errorMessage, type JsonValue } from '@keel/base'
import type { ToolSpec } from '@keel/llm'
import { type Projection, registerProjection, type Session } from '@keel/session'
import { type Tool, ToolRegistry, ToolRegistryError, toToolSpec } from '@keel/tools'
import type { OfferedTool } from './events.js'

/**
 * A plugin's tools that may change while the agent runs (`ctx.registerToolSet()`). The
 * agent offers the model the set's current tools from the next step on; within a step the
 * tools stay as they were when it started.
 */
export interface ToolSet {
  /**
   * Replaces the set's tools. Each is checked as a registered tool is (name, definition,
   * JSON Schema; names unique within the set and not taken by another tool of the agent);
   * on a problem it throws `ToolRegistryError` and the set keeps its tools. Cheap when
   * nothing changed: the tools offered are compared by digest.
   */
  replace(tools: ReadonlyArray<Tool<unknown>>): void
  /** The tools the set holds now (what the next step offers). */
  current(): ReadonlyArray<Tool<unknown>>
}

/** How one plugin's offered tools changed against the log's last record of them. */
export interface ToolListChange {
  readonly plugin: string
  /** The set as it is offered from now on. */
  readonly tools: readonly OfferedTool[]
  readonly added: readonly string[]
  readonly removed: readonly string[]
  /** Same name, different digest (description or parameters changed). */
  readonly changed: readonly string[]
  /** The log held no record of this plugin's set before (a first offer is no news to the model). */
  readonly first: boolean
}

const digests = new WeakMap<ToolSpec, string>()

/** `sha256:<hex>` of a tool spec's canonical JSON (name, description, parameters). */
export function toolDigest(spec: ToolSpec): string {
  let digest = digests.get(spec)
  if (digest === undefined) {
    digest = `sha256:${createHash('sha256').update(canonicalJson(spec)).digest('hex')}`
    digests.set(spec, digest)
  }
  return digest
}

/**
 * The latest `tool/list-changed` of each plugin: what the model was last offered from each
 * plugin's tool set (absent: never recorded, i.e. empty).
 */
export const offeredToolsProjection: Projection<ReadonlyMap<string, readonly OfferedTool[]>> =
  registerProjection<ReadonlyMap<string, readonly OfferedTool[]>>({
    name: '@keel/agent/offered-tools',
    init: () => new Map(),
    apply: (state, event) => {
      if (event.type !== 'tool/list-changed') return state
      const next = new Map(state)
      next.set(event.data.plugin, event.data.tools)
      return next
    },
    checkpoint: {
      version: 1,
      save: (state) => [...state] as unknown as JsonValue,
      restore: (saved) => new Map(saved as unknown as [string, readonly OfferedTool[]][]),
    },
  })

/** What changed from `before` to `after` (both lists of one plugin). */
export function diffOffered(
  plugin: string,
  before: readonly OfferedTool[] | undefined,
  after: readonly OfferedTool[],
): ToolListChange | undefined {
  const old = new Map((before ?? []).map((t) => [t.name, t.digest]))
  const now = new Map(after.map((t) => [t.name, t.digest]))
  const added = after.filter((t) => !old.has(t.name)).map((t) => t.name)
  const removed = (before ?? []).filter((t) => !now.has(t.name)).map((t) => t.name)
  const changed = after.filter((t) => old.has(t.name) && old.get(t.name) !== t.digest).map((t) => t.name)
  const reordered =
    added.length === 0 &&
    removed.length === 0 &&
    changed.length === 0 &&
    (before ?? []).some((t, i) => after[i]?.name !== t.name)
  if (added.length === 0 && removed.length === 0 && changed.length === 0 && !reordered) return undefined
  return { plugin, tools: after, added, removed, changed, first: before === undefined }
}

function names(list: readonly string[], max = 20): string {
  const shown = list.slice(0, max).join(', ')
  return list.length > max ? `${shown} and ${list.length - max} more` : shown
}

/**
 * What the model is told about a change, or undefined when there is nothing it needs to
 * hear: a first offer, or tools only added (the request's tool list says that already).
 */
export function describeChange(change: ToolListChange): string | undefined {
  if (change.first || (change.removed.length === 0 && change.changed.length === 0)) return undefined
  const parts = [`The tools from plugin '${change.plugin}' changed since they were last offered.`]
  if (change.changed.length > 0) {
    parts.push(
      `Changed (description or parameters differ from what earlier calls in this conversation used; read them again before calling): ${names(change.changed)}.`,
    )
  }
  if (change.removed.length > 0)
    parts.push(`No longer available (do not call them): ${names(change.removed)}.`)
  if (change.added.length > 0) parts.push(`New: ${names(change.added)}.`)
  return parts.join(' ')
}

interface SetState {
  tools: ReadonlyArray<Tool<unknown>>
  version: number
}

/**
 * The agent's tools: the fixed ones (plugins' registered tools, the agent's own) and every
 * plugin's {@link ToolSet}, merged into one registry at step boundaries ({@link refresh}).
 */
export class ToolBoard {
  #fixed: ReadonlyArray<Tool<unknown>> = []
  readonly #sets = new Map<string, SetState>()
  /** The set versions the current registry was built from. */
  readonly #built = new Map<string, number>()
  /** The set versions already compared with the log. */
  readonly #synced = new Map<string, number>()
  #registry = new ToolRegistry()
  #specs: readonly ToolSpec[] = []
  #checkedLog = false
  readonly #report: (code: string, message: string) => void
  readonly #allowed: (name: string) => boolean

  /** `allowed` withholds tools by name (the agent's `toolFilter`), fixed and offered alike. */
  constructor(
    report: (code: string, message: string) => void,
    allowed: (name: string) => boolean = () => true,
  ) {
    this.#report = report
    this.#allowed = allowed
  }

  /** The tool set of `plugin` (the same one on every call). */
  set(plugin: string): ToolSet {
    if (!this.#sets.has(plugin)) this.#sets.set(plugin, { tools: [], version: 0 })
    return {
      replace: (tools) => this.#replace(plugin, tools),
      current: () => this.#sets.get(plugin)!.tools,
    }
  }

  /** The registry of the running step (fixed tools first, then each set in plugin order). */
  get registry(): ToolRegistry {
    return this.#registry
  }

  /** The specs the running step sends. */
  get specs(): readonly ToolSpec[] {
    return this.#specs
  }

  /**
   * Sets the fixed tools and builds the first registry. Throws the registry's error for a
   * bad fixed tool (the agent then fails to start).
   */
  start(fixed: ReadonlyArray<Tool<unknown>>): void {
    const kept = fixed.filter((tool) => this.#allowed(tool.name))
    const registry = new ToolRegistry(kept)
    this.#fixed = kept
    this.#specs = Object.freeze(registry.specs())
    this.#registry = registry
    this.#rebuild()
  }

  #replace(plugin: string, tools: ReadonlyArray<Tool<unknown>>): void {
    const own = new ToolRegistry(tools) // definitions, schemas, names unique within the set
    own.specs()
    const taken = new Set(this.#fixed.map((t) => t.name))
    for (const [other, state] of this.#sets) {
      if (other !== plugin) for (const t of state.tools) taken.add(t.name)
    }
    const clash = own.names().find((name) => taken.has(name))
    if (clash !== undefined) {
      throw new ToolRegistryError(
        'TOOL_NAME_DUPLICATE',
        `plugin '${plugin}' offers a tool named ${clash}, which another tool of this agent already has`,
        { tool: clash, plugin },
      )
    }
    const state = this.#sets.get(plugin)!
    this.#sets.set(plugin, { tools: own.list(), version: state.version + 1 })
  }

  /** Rebuilds the registry when a set changed since it was built. */
  #rebuild(): void {
    const stale = [...this.#sets].some(([plugin, s]) => this.#built.get(plugin) !== s.version)
    if (!stale && this.#built.size === this.#sets.size) return
    const registry = new ToolRegistry(this.#fixed)
    for (const [plugin, state] of this.#sets) {
      for (const tool of state.tools) {
        if (!this.#allowed(tool.name)) continue
        try {
          registry.register(tool)
        } catch (error) {
          // Another set took the name after this one was checked: the later one loses it.
          this.#report(
            'TOOL_NAME_CLASH',
            `plugin '${plugin}': ${tool.name} is not offered: ${errorMessage(error)}`,
          )
        }
      }
      this.#built.set(plugin, state.version)
    }
    this.#registry = registry
    // Frozen: one array for as long as the registry lasts, so its digest is taken once.
    this.#specs = Object.freeze(registry.specs())
  }

  /**
   * At a step boundary: takes every set's current tools into the registry, and returns how
   * each plugin's offer differs from the log's last record of it. The first call of an
   * agent also reports plugins the log recorded tools for that have no set here (gone).
   */
  refresh(session: Session): ToolListChange[] {
    this.#rebuild()
    const logged = session.project(offeredToolsProjection)
    const changes: ToolListChange[] = []
    let byName: Map<string, ToolSpec> | undefined
    for (const [plugin, state] of this.#sets) {
      if (this.#synced.get(plugin) === state.version) continue
      this.#synced.set(plugin, state.version)
      byName ??= new Map(this.#specs.map((spec) => [spec.name, spec]))
      const offered = state.tools
        .filter((t) => this.#registry.get(t.name) === t)
        .map((t) => ({ name: t.name, digest: toolDigest(byName!.get(t.name) ?? toToolSpec(t)) }))
      const change = diffOffered(plugin, logged.get(plugin), offered)
      if (change) changes.push(change)
    }
    if (!this.#checkedLog) {
      this.#checkedLog = true
      for (const [plugin, tools] of logged) {
        if (this.#sets.has(plugin) || tools.length === 0) continue
        const change = diffOffered(plugin, tools, [])
        if (change) changes.push(change)
      }
    }
    return changes
  }
}

/** What {@link offerTools} needs from the agent. */
export interface OfferContext {
  readonly session: Session
  readonly board: ToolBoard
  notice(code: string, message: string, turn: number, step: number): void
}

/**
 * Before step `step` starts: takes the tool sets' changes into the registry, logs one
 * `tool/list-changed` per plugin whose offer differs from the log, tells the model (a
 * `developer/message`) about tools that went or changed, and the observers (`onNotice`
 * `TOOLS_CHANGED`) about every change.
 */
export function offerTools(ctx: OfferContext, turn: number, step: number): void {
  for (const change of ctx.board.refresh(ctx.session)) {
    ctx.session.append('tool/list-changed', { turn, step, plugin: change.plugin, tools: [...change.tools] })
    const told = describeChange(change)
    if (told !== undefined) {
      ctx.session.append('developer/message', {
        message: { role: 'developer', content: [{ type: 'text', text: told }] },
        source: 'agent/tools',
      })
    }
    const parts = [
      change.added.length > 0 ? `added ${names(change.added, 8)}` : '',
      change.changed.length > 0 ? `changed ${names(change.changed, 8)}` : '',
      change.removed.length > 0 ? `removed ${names(change.removed, 8)}` : '',
    ].filter((p) => p !== '')
    if (parts.length > 0) {
      ctx.notice('TOOLS_CHANGED', `tools of plugin '${change.plugin}': ${parts.join('; ')}`, turn, step)
    }
  }
}
