import type { Brand } from '@keel/base'
import type { ToolCallId } from '@keel/llm'
import type { SessionEventMap } from './events.js'

/**
 * A session's id: a string safe as a file name (letters, digits, `-`, `_`, `.`; 1–128 of
 * them, no leading dot).
 * @pattern ^[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}$
 */
export type SessionId = Brand<string, 'SessionId'>

/**
 * An event's position in its session's log: contiguous from 0, equal to its index.
 * @integer
 * @minimum 0
 */
export type SessionSeq = Brand<number, 'SessionSeq'>

export type { SessionEventMap, ToolCallId }

/** The appendable event-type keys of {@link SessionEventMap}, plugin-merged extensions included. */
export type SessionEventType = keyof SessionEventMap & string

/**
 * The event types whose events are model messages and so may appear on the surface (the
 * ordered list of nodes the model sees). Only these may carry {@link SurfaceOp} and
 * `sourceEventSeqs`.
 */
export type SurfaceEventType =
  | 'system/message'
  | 'developer/message'
  | 'user/message'
  | 'assistant/message'
  | 'tool/result'

/**
 * How a surface event enters the surface.
 *
 * - `'append'` (the default): added at the tail.
 * - `{ op: 'replace', startSeq, endSeq }`: replaces the surface nodes from `startSeq`
 *   through `endSeq` (both inclusive, both current surface nodes, `startSeq` not after
 *   `endSeq` on the surface) with this node. The event's `sourceEventSeqs` must cite
 *   every node it shadows. Compaction uses this; the shadowed events stay in the log.
 */
export type SurfaceOp = 'append' | { op: 'replace'; startSeq: SessionSeq; endSeq: SessionSeq }

/** The surface fields a surface event may carry. */
export interface SurfaceFields {
  /** How this node enters the surface; `'append'` when absent. */
  surfaceOp?: SurfaceOp
  /** Earlier events this node was made from (all shadowed nodes, for a replace). */
  sourceEventSeqs?: SessionSeq[]
}

/** Non-surface events can never carry surface fields; the compiler enforces it. */
export interface NoSurfaceFields {
  surfaceOp?: never
  sourceEventSeqs?: never
}

/** The fields every event has, whatever its type. */
export interface EventEnvelope<K extends SessionEventType> {
  /** The event type: a key of {@link SessionEventMap}. */
  type: K
  /** Position in the log: contiguous from 0, equal to the event's index. */
  seq: SessionSeq
  /** When the event was appended, Unix epoch milliseconds. */
  time: number
  /** The payload, exactly `SessionEventMap[type]`; plain JSON only. */
  data: SessionEventMap[K]
  /**
   * A reader that does not know `type` may skip this event. Absent means required: a
   * reader meeting an unknown required event refuses the whole session, because skipping
   * it could change how the rest of the log must be read. Writers set it only on purely
   * informational records.
   */
  ignorable?: true
}

/**
 * One immutable entry of the session log: a discriminated union over `type`, so
 * `switch (event.type)` narrows `event.data`. `surfaceOp` and `sourceEventSeqs` exist only
 * on {@link SurfaceEventType} variants.
 */
export type SessionEvent<T extends SessionEventType = SessionEventType> = {
  [K in T]: EventEnvelope<K> & (K extends SurfaceEventType ? SurfaceFields : NoSurfaceFields)
}[T]

/** The format version this build writes. Stores refuse newer ones and migrate older ones. */
export const SESSION_FORMAT_VERSION = 1

/** One plugin of a recorded {@link AgentComposition}. */
export interface ComposedPlugin {
  /** The plugin's name (`@keel/todo`). */
  name: string
  /** The version of the package that provided the plugin when the composition was resolved. */
  version: string
  /** The config the preset gave the plugin (plain JSON), as given (before defaults); absent when none. */
  config?: unknown
  /** `sha256:` and the hex SHA-256 of the config's canonical JSON (sorted keys); tells configs apart at a glance. */
  configDigest: string
}

/** The plugins, tool groups and model a preset resolved to. */
export interface AgentComposition {
  /** The preset's id (`coding`, or a user preset's). */
  preset: string
  /** The plugins in setup order. */
  plugins: ComposedPlugin[]
  /** The tool groups (`fs`, `fs-read`, `shell`), in order. */
  tools: string[]
  /** The model the preset names, when it names one. */
  model?: string
  /**
   * Context windows per model id, in tokens, the preset gives (over the adapter's table);
   * the agent budgets with them. Absent when the preset gives none.
   */
  contextWindows?: Record<string, number>
  /**
   * Whether a person may be asked to approve tool calls (the preset's `interactive`).
   * `false` (a headless preset): no interactive answerer is consulted, so what needs
   * approval fails closed. Absent in sessions recorded before it existed: interactive.
   */
  interactive?: boolean
  /**
   * Tools withheld from the model by name, applied to every tool the composition yields
   * (tool groups and plugins' tools alike): with `only`, the agent is offered just those
   * names; every name in `except` is removed. A subagent's definition (its `tools` and
   * `disallowedTools`) is recorded here, so the child resumes with the same tools.
   */
  toolFilter?: ToolFilter
}

/** Tool names an agent is limited to (`only`) and tool names it never gets (`except`). */
export interface ToolFilter {
  /** @uniqueItems */
  only?: string[]
  /** @uniqueItems */
  except?: string[]
}

/**
 * The tool call of another session that runs this session as a child agent (a subagent):
 * the child's final answer is that call's result. Recorded in the child's header, so a
 * store lists children under their parent without reading any log.
 */
export interface SessionDelegation {
  /** The delegating (parent) session. */
  session: SessionId
  /**
   * The parent's turn in which the call was made.
   * @integer
   * @minimum 1
   */
  turn: number
  /**
   * The parent's `tool/call` id.
   * @minLength 1
   */
  callId: string
  /**
   * The name of the agent definition the child runs (`explore`).
   * @minLength 1
   */
  agent: string
  /**
   * How many delegations lie above this session: 1 for the child of a top-level session.
   * @integer
   * @minimum 1
   */
  depth: number
}

/**
 * The logical header kept beside the log (not in it). Written once at creation.
 */
export interface SessionHeader {
  /**
   * The {@link SESSION_FORMAT_VERSION} the session was written with.
   * @integer
   * @minimum 1
   */
  version: number
  id: SessionId
  /** Creation time, Unix epoch milliseconds. */
  createdAt: number
  /** Working directory of the agent that created the session, when it had one. */
  cwd?: string
  /** The session this one was forked from. */
  parentSession?: SessionId
  /**
   * How many events were copied from the parent (the marker `session/end-seed` follows them).
   * @integer
   * @minimum 0
   */
  seedLength?: number
  /** The preset the session was created with. */
  agentPreset?: string
  /**
   * What that preset resolved to when the session was created: the plugins (name, version,
   * config, config digest), tool groups and model. Resume and fork rebuild exactly this
   * (unless a later `agent-preset/selected` event chose another composition).
   */
  agentComposition?: AgentComposition
  /** A short human title, when one was given. */
  title?: string
  /**
   * Set when the session is a child agent's (a subagent): the parent session, turn and call
   * it answers. Not inherited by a fork (a fork of a child is nobody's child).
   */
  delegatedBy?: SessionDelegation
}
