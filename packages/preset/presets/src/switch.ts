// When a session may run under another preset than the one it recorded: while it is blank,
// and as a fresh fork whose inherited history the new preset can read (every event type in
// it is the core's or one of the new preset's plugins', or was appended ignorable).
import {
  type AgentComposition,
  getEventRegistration,
  KNOWN_EVENT_TYPES,
  type Session,
  type SessionEvent,
} from '@keel/session'
import { builtinCatalog, type PluginCatalog } from './catalog.js'
import { PresetError } from './errors.js'
import type { Preset } from './preset.js'
import { resolveComposition } from './resolve.js'

/** The packages whose events every composition reads (the log's own, the agent's, the presets'). */
const CORE_OWNERS: ReadonlySet<string> = new Set(['@keel/session', '@keel/agent', '@keel/presets'])

/** An event type of a history that a composition does not know, with its owner and how often it occurs. */
export interface UnknownEventType {
  readonly type: string
  readonly owner: string
  readonly count: number
}

/** Whether nothing but preset switches has happened in the session yet. */
export function isBlank(session: Session): boolean {
  return session.events.every((e) => e.type === 'agent-preset/selected')
}

/** Whether the session is a fork that has done nothing of its own yet (its seed marker and preset switches only). */
export function isFreshFork(session: Session): boolean {
  const seed = session.header.seedLength
  if (seed === undefined) return false
  return session.events
    .slice(seed)
    .every((e) => e.type === 'session/end-seed' || e.type === 'agent-preset/selected')
}

/**
 * The event types of `events` that `composition` does not know: owned neither by the core
 * (`@keel/session`, `@keel/agent`, `@keel/presets`) nor by one of its plugins, and not
 * appended `ignorable` (a reader may skip those). Under such a composition the state those
 * events carry (a todo list, an approval policy, schedules) would be silently dropped.
 */
export function unknownEventTypes(
  events: readonly SessionEvent[],
  composition: AgentComposition,
): UnknownEventType[] {
  const plugins = new Set(composition.plugins.map((p) => p.name))
  const found = new Map<string, { type: string; owner: string; count: number }>()
  for (const event of events) {
    if (event.ignorable === true) continue
    const owner =
      getEventRegistration(event.type)?.owner ?? KNOWN_EVENT_TYPES[event.type]?.owner ?? 'an unknown package'
    if (CORE_OWNERS.has(owner) || plugins.has(owner)) continue
    const entry = found.get(event.type)
    if (entry) entry.count++
    else found.set(event.type, { type: event.type, owner, count: 1 })
  }
  return [...found.values()]
}

function describeUnknown(unknown: readonly UnknownEventType[]): string {
  return unknown.map((u) => `${u.type} (${u.owner}, ${u.count}×)`).join(', ')
}

function unknownError(where: string, composition: AgentComposition, unknown: readonly UnknownEventType[]) {
  const owners = [...new Set(unknown.map((u) => u.owner))]
  return new PresetError(
    'PRESET_SWITCH_UNKNOWN_EVENTS',
    `${where} cannot run under preset ${JSON.stringify(composition.preset)}: the history it keeps holds events that preset does not know: ${describeUnknown(unknown)}. Fork under a preset that runs ${owners.join(', ')}, fork at a seq before those events (--at), or start a new session with --preset ${composition.preset}`,
    { preset: composition.preset, unknown: unknown.map((u) => u.type) },
  )
}

/**
 * Switches a session to another composition by appending `agent-preset/selected`: a blank
 * session always; one that records no preset (`recorded` undefined: a program made it)
 * when the composition knows every event type of its history; a fresh fork (nothing done since its seed) when the new composition knows
 * every event type of the inherited history (else `PRESET_SWITCH_UNKNOWN_EVENTS` names
 * them). Any other session is `PRESET_SWITCH_NOT_BLANK`, saying what works instead.
 */
export function selectComposition(session: Session, composition: AgentComposition, recorded?: string): void {
  if (!isBlank(session) && recorded === undefined) {
    // made without a preset (by a program): it takes the one named, if that knows its history
    const unknown = unknownEventTypes(session.events, composition)
    if (unknown.length > 0) throw unknownError(`session ${session.id}`, composition, unknown)
  } else if (!isBlank(session)) {
    if (!isFreshFork(session)) {
      const was = recorded === undefined ? '' : ` (preset ${JSON.stringify(recorded)})`
      throw new PresetError(
        'PRESET_SWITCH_NOT_BLANK',
        `session ${session.id} already has work in it, so it keeps the preset it recorded${was}: resume it without --preset, or fork it under the other preset (keel fork ${session.id} --preset ${composition.preset}), which works when that preset knows every event type in the history the fork keeps`,
        { session: session.id, preset: composition.preset },
      )
    }
    const unknown = unknownEventTypes(session.events.slice(0, session.header.seedLength), composition)
    if (unknown.length > 0) throw unknownError(`fork ${session.id}`, composition, unknown)
  }
  session.append('agent-preset/selected', { preset: composition.preset, composition })
}

/**
 * Checks, before a fork is made, that `parent` forked through `atSeq` (default: all of it)
 * can run under `preset`: throws `PRESET_SWITCH_UNKNOWN_EVENTS` naming the event types of the
 * kept prefix the preset does not know. A CLI calls it so that a refused fork leaves no
 * session behind.
 */
export function checkForkUnder(
  parent: Session,
  preset: Preset,
  options: { atSeq?: number; catalog?: PluginCatalog; source?: string } = {},
): void {
  const composition = resolveComposition(preset, {
    catalog: options.catalog ?? builtinCatalog(),
    ...(options.source === undefined ? {} : { source: options.source }),
  })
  const kept = parent.events.slice(0, (options.atSeq ?? parent.events.length - 1) + 1)
  const unknown = unknownEventTypes(kept, composition)
  if (unknown.length > 0) throw unknownError(`a fork of session ${parent.id}`, composition, unknown)
}
