import './events.generated.js'

/**
 * When the user is asked before a tool runs.
 * - `strict`: ask before anything that is not a read inside the allowed area.
 * - `on_request`: ask only when the sandbox cannot contain the call (a shell without an OS
 *   sandbox, a network tool while the network is off, a tool whose effects are unknown).
 * - `never`: never ask; what would have been asked is refused, so a headless run cannot hang.
 */
export type ApprovalPolicy = 'strict' | 'on_request' | 'never'

/**
 * How much a tool call may touch.
 * - `read_only`: reads inside the workspace; no writes through any tool; shell commands run
 *   in an OS sandbox with no writable path (or only after approval where there is none).
 * - `workspace_write`: reads and writes under the workspace roots, judged on real paths, with
 *   protected paths (`.git`, `.keel`) refused; shell commands run in an OS sandbox that can
 *   write only the workspace and has no network unless domains are allowed.
 * - `danger_full_access`: no limits; the approval policy alone decides what is asked.
 */
export type SandboxMode = 'read_only' | 'workspace_write' | 'danger_full_access'

declare module '@keel/session' {
  interface SessionEventMap {
    /**
     * The approval policy was switched; the latest wins on replay. Log-only.
     * @example {"approvalPolicy":"strict"}
     */
    'approval/policy': { approvalPolicy: ApprovalPolicy }

    /**
     * The sandbox mode was switched; the latest wins on replay. Log-only.
     * @example {"sandboxMode":"read_only"}
     */
    'sandbox/mode': { sandboxMode: SandboxMode }
  }
}
