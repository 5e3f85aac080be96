import { canonicalJson } from '@keel/base'
import type { UserMessage } from '@keel/llm'
import {
  type EventInvariant,
  type Projection,
  registerProjection,
  type Session,
  type SessionEventMap,
} from '@keel/session'
import { AgentError } from './errors.js'
import type { InboxTarget } from './events.js'
import { toUserMessage } from './options.js'

/** One stored edit of the inbox (`agent/inbox/spliced`). */
export type InboxSplice = SessionEventMap['agent/inbox/spliced']

/** An edit as a caller proposes it; {@link normalizeSplice} makes the stored form. */
export interface InboxEdit {
  readonly start: number
  readonly removedCount?: number
  readonly inserted?: readonly UserMessage[]
  readonly outcome?: 'canceled'
  readonly target?: InboxTarget
}

const same = (a: UserMessage, b: UserMessage): boolean => canonicalJson(a) === canonicalJson(b)

/**
 * Why `splice` is not a normalized edit of `list`, or `undefined` when it is: its range
 * lies within the list, it changes something, removed and inserted messages share no
 * leading or trailing message, and `canceled` only withdraws (inserts nothing).
 */
export function spliceProblem(list: readonly UserMessage[], splice: InboxSplice): string | undefined {
  const removed = splice.removedCount ?? 0
  if (splice.start > list.length)
    return `start ${splice.start} is past the end of the ${list.length} pending message(s)`
  if (splice.start + removed > list.length)
    return `it removes ${removed} message(s) from ${splice.start}, but only ${list.length} are pending`
  if (removed === 0 && splice.inserted.length === 0) return 'it removes and inserts nothing'
  if (splice.outcome === 'canceled' && (removed === 0 || splice.inserted.length > 0))
    return "'canceled' withdraws messages: it must remove some and insert none"
  const gone = list.slice(splice.start, splice.start + removed)
  const kept = Math.min(gone.length, splice.inserted.length)
  if (kept > 0 && (same(gone[0]!, splice.inserted[0]!) || same(gone.at(-1)!, splice.inserted.at(-1)!)))
    return 'the removed and inserted messages share a leading or trailing message (not normalized)'
  return undefined
}

/** The list after a (checked) splice; `list` is not changed. */
export function applySplice(list: readonly UserMessage[], splice: InboxSplice): readonly UserMessage[] {
  const next = [...list]
  next.splice(splice.start, splice.removedCount ?? 0, ...splice.inserted)
  return next
}

/**
 * The stored form of an edit of `list`: messages validated, the range checked, and any
 * leading or trailing messages the edit would remove and insert again left out. Returns
 * `undefined` for an edit that changes nothing. Throws `INBOX_SPLICE_INVALID` for a range
 * outside the list or a `canceled` edit that inserts.
 */
export function normalizeSplice(list: readonly UserMessage[], edit: InboxEdit): InboxSplice | undefined {
  const inserted = (edit.inserted ?? []).map((m) => toUserMessage(m, 'inbox splice'))
  let start = edit.start
  let removed = edit.removedCount ?? 0
  if (!Number.isInteger(start) || !Number.isInteger(removed) || start < 0 || removed < 0) {
    throw new AgentError('INBOX_SPLICE_INVALID', `inbox splice: start and removedCount must be integers ≥ 0`)
  }
  while (removed > 0 && inserted.length > 0 && start < list.length && same(list[start]!, inserted[0]!)) {
    start++
    removed--
    inserted.shift()
  }
  while (
    removed > 0 &&
    inserted.length > 0 &&
    start + removed <= list.length &&
    same(list[start + removed - 1]!, inserted.at(-1)!)
  ) {
    removed--
    inserted.pop()
  }
  if (removed === 0 && inserted.length === 0) return undefined
  const splice: InboxSplice = { target: edit.target ?? 'next-turn', start, inserted }
  if (removed > 0) splice.removedCount = removed
  if (edit.outcome !== undefined) splice.outcome = edit.outcome
  const problem = spliceProblem(list, splice)
  if (problem !== undefined) throw new AgentError('INBOX_SPLICE_INVALID', `inbox splice: ${problem}`)
  return splice
}

/** The pending `next-turn` messages: the fold of `agent/inbox/spliced`, oldest first. */
export const inboxProjection: Projection<readonly UserMessage[]> = registerProjection<readonly UserMessage[]>(
  {
    name: '@keel/agent/inbox',
    init: () => [],
    apply: (list, event) => (event.type === 'agent/inbox/spliced' ? applySplice(list, event.data) : list),
    checkpoint: { version: 1 },
  },
)

/**
 * The invariant of @keel/agent's events, checked on every append and load: each inbox
 * splice is a normalized edit of the list folded so far (other agent events pass).
 */
export const inboxInvariant: EventInvariant<readonly UserMessage[]> = {
  init: () => [],
  check(list, event) {
    if (event.type !== 'agent/inbox/spliced') return { ok: true, state: list }
    const splice = event.data as InboxSplice
    const problem = spliceProblem(list, splice)
    if (problem !== undefined) return { ok: false, reason: problem, code: 'INBOX_SPLICE_INVALID' }
    return { ok: true, state: applySplice(list, splice) }
  },
  checkpoint: { version: 1 },
}

/** The messages waiting in the session's inbox, oldest first. */
export function pendingMessages(session: Session): readonly UserMessage[] {
  return session.project(inboxProjection)
}

/** Normalizes `edit` against the session's inbox and appends it; returns what was stored (nothing for a no-op). */
export function spliceInbox(session: Session, edit: InboxEdit): InboxSplice | undefined {
  const splice = normalizeSplice(pendingMessages(session), edit)
  if (splice !== undefined) session.append('agent/inbox/spliced', splice)
  return splice
}

/** Queues a message at the end of the inbox. */
export function enqueueMessage(session: Session, message: string | UserMessage): void {
  const list = pendingMessages(session)
  spliceInbox(session, { start: list.length, inserted: [toUserMessage(message, 'enqueue')] })
}

/** Withdraws the pending message at `index` unrun (`canceled`) and returns it, so it can be edited. */
export function withdrawMessage(session: Session, index: number): UserMessage {
  const list = pendingMessages(session)
  const message = list[index]
  if (message === undefined) {
    throw new AgentError('INBOX_SPLICE_INVALID', `no pending message at ${index} (${list.length} pending)`)
  }
  spliceInbox(session, { start: index, removedCount: 1, outcome: 'canceled' })
  return message
}

/**
 * Takes the first pending message equal to `message` out of the inbox to run it (a
 * removal without outcome); false when it is not pending (it was withdrawn meanwhile).
 */
export function takeFromInbox(session: Session, message: UserMessage): boolean {
  const index = pendingMessages(session).findIndex((m) => same(m, message))
  if (index === -1) return false
  spliceInbox(session, { start: index, removedCount: 1 })
  return true
}
