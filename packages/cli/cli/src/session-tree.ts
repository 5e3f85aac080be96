// How `keel sessions list` and `show` present subagent sessions: children under their parent.
import type { SessionDelegation, SessionHeader } from '@keel/session'
import type { SessionSummary } from '@keel/store'

/** One row of the list: a session and how deep it sits under a listed parent. */
export interface NestedSession {
  readonly summary: SessionSummary
  /** 0 for a session whose parent is not listed (or that has none). */
  readonly depth: number
}

/**
 * The sessions in display order: each top-level one (in the order given, newest first)
 * followed by its subagent children, oldest first, recursively. A child whose parent is not
 * in the list (cut by `--limit`) stands at the top level.
 */
export function nestSessions(sessions: readonly SessionSummary[]): NestedSession[] {
  const listed = new Set(sessions.map((s) => s.id))
  const children = new Map<string, SessionSummary[]>()
  for (const s of sessions) {
    const parent = s.delegatedBy?.session
    if (parent === undefined || !listed.has(parent) || parent === s.id) continue
    children.set(parent, [...(children.get(parent) ?? []), s])
  }
  const out: NestedSession[] = []
  const placed = new Set<string>()
  const visit = (summary: SessionSummary, depth: number): void => {
    if (placed.has(summary.id)) return
    placed.add(summary.id)
    out.push({ summary, depth })
    const kids = [...(children.get(summary.id) ?? [])].sort((a, b) => a.createdAt - b.createdAt)
    for (const kid of kids) visit(kid, depth + 1)
  }
  for (const s of sessions) {
    const parent = s.delegatedBy?.session
    if (parent === undefined || !listed.has(parent) || parent === s.id) visit(s, 0)
  }
  // A cycle of parents (a hand-edited header) has no top: list what is left at the top level.
  for (const s of sessions) visit(s, 0)
  return out
}

/** `subagent explore of <parent> (turn 2, call c1)`: what a child session answers. */
export function delegationLabel(delegation: SessionDelegation, withParent: boolean): string {
  const of = withParent ? ` of ${delegation.session}` : ''
  return `subagent ${delegation.agent}${of} (turn ${delegation.turn}, call ${delegation.callId})`
}

/** The header line of `keel sessions show` for a child session, or undefined for others. */
export function childOfLine(header: SessionHeader): string | undefined {
  const delegation = header.delegatedBy
  if (!delegation) return undefined
  return `  child of ${delegation.session}: ${delegationLabel(delegation, false)}, depth ${delegation.depth} (keel sessions show ${delegation.session})`
}
