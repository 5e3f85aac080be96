import type { JsonValue } from '@keel/base'
// A project's `.mcp.json` is code from the repository: its stdio servers are programs that
// would run with the person's rights. They start only once a person approved them in this
// session (`/mcp approve`), recorded in the log like the session's approval rules, and
// only for the exact entry approved.
import { type Projection, registerProjection } from '@keel/session'
import type { ConfiguredServer } from './config.js'
import type { McpApprovalDecision } from './events.js'

/** The latest answer per project server: the entry's digest and the decision. */
export type ProjectApprovals = ReadonlyMap<
  string,
  { readonly digest: string; readonly decision: McpApprovalDecision }
>

/** Folds `mcp/project-approval` (latest per server wins); resume and fork rebuild it exactly. */
export const projectApprovalsProjection: Projection<ProjectApprovals> = registerProjection<ProjectApprovals>({
  name: '@keel/mcp/project-approvals',
  init: () => new Map(),
  apply: (state, event) => {
    if (event.type !== 'mcp/project-approval') return state
    const next = new Map(state)
    next.set(event.data.server, { digest: event.data.configDigest, decision: event.data.decision })
    return next
  },
  checkpoint: {
    version: 1,
    save: (state) => [...state] as unknown as JsonValue,
    restore: (saved) =>
      new Map(saved as unknown as [string, { digest: string; decision: McpApprovalDecision }][]),
  },
})

/** Whether a server may start: every non-project server may; a project one per the log. */
export type Gate = 'open' | 'needs-approval' | 'rejected' | 'disabled'

/**
 * The gate of one configured server: `disabled` by its entry, `open` for preset and user
 * servers, and for a project server `open` / `rejected` when the person answered for this
 * very entry, else `needs-approval` (never answered, or the entry changed since).
 */
export function gateOf(server: ConfiguredServer, approvals: ProjectApprovals): Gate {
  if (server.entry.enabled === false) return 'disabled'
  if (server.scope !== 'project') return 'open'
  const answer = approvals.get(server.name)
  if (answer === undefined || answer.digest !== server.digest) return 'needs-approval'
  return answer.decision === 'approved' ? 'open' : 'rejected'
}

/** Whether a project server's entry changed since the person last answered for it. */
export function changedSinceAnswer(server: ConfiguredServer, approvals: ProjectApprovals): boolean {
  const answer = approvals.get(server.name)
  return answer !== undefined && answer.digest !== server.digest
}
