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

/**
 * How one approval question was settled.
 * - `allowed-once`: run this call.
 * - `allowed-session`: run it, and calls matching `rule` without asking for the rest of the
 *   session (forks inherit the rule; the log is the only place it is kept).
 * - `rejected`: someone said no; the model gets `USER_REJECTED` with the reason.
 * - `cancelled`: the turn was aborted while the question was open.
 * - `unavailable`: nobody could answer (headless); refused with `APPROVAL_UNAVAILABLE`.
 */
export type ApprovalOutcome = 'allowed-once' | 'allowed-session' | 'rejected' | 'cancelled' | 'unavailable'

/**
 * Who settled an approval question: a hook answerer (`hook`), the user's own earlier
 * "allow for this session" (`session-rule`), a person at an interactive answerer (`user`),
 * or nobody (`none`: cancelled or unavailable).
 */
export type ApprovalAnswerSource = 'hook' | 'session-rule' | 'user' | 'none'

/**
 * A standing "allow for this session": later calls of `toolName` that the sandbox mode
 * permits are not asked again. With `command`, only that exact command line matches (shell
 * tools); without it, every call of the tool does. A rule never lifts a sandbox limit.
 */
export interface SessionRule {
  toolName: string
  command?: string
}

declare module '@keel/session' {
  interface SessionEventMap {
    /**
     * The permission decision for a tool call was `ask`, and the answerers are being
     * consulted. Log-only; inside the open turn, before the call's `tool/result`. `id` is
     * unique within the session and is answered by exactly one `approval/decided`. A call
     * is asked about again when a plugin rewrote its input (`tool/input-rewritten`); that
     * later question's `id` gets a `:<n>` suffix.
     * @example {"id":"approval-1","turn":1,"toolName":"shell","callId":"call-1","reason":"shell commands run outside the sandbox"}
     */
    'approval/asked': {
      /** @minLength 1 */
      id: string
      /** @integer @minimum 1 */
      turn: number
      toolName: string
      callId: string
      reason: string
    }

    /**
     * The answer to the `approval/asked` with the same `id`, in the same turn. Exactly one
     * per question. `rule` is present only when `outcome` is `allowed-session`, and is folded
     * into the session's rules (it survives resume and is inherited by forks). `reason`
     * is what the answerer said (a rejection's reason is passed to the model).
     * @example {"id":"approval-1","turn":1,"outcome":"allowed-session","by":"user","answerer":"terminal","rule":{"toolName":"shell","command":"pnpm test"}}
     */
    'approval/decided': {
      /** @minLength 1 */
      id: string
      /** @integer @minimum 1 */
      turn: number
      outcome: ApprovalOutcome
      by: ApprovalAnswerSource
      answerer?: string
      reason?: string
      rule?: SessionRule
    }

    /** The approval policy was switched; the latest wins on replay. Log-only. @example {"approvalPolicy":"on_request"} */
    'approval/policy': { approvalPolicy: ApprovalPolicy }

    /** The sandbox mode was switched; the latest wins on replay. Log-only. @example {"sandboxMode":"workspace_write"} */
    'sandbox/mode': { sandboxMode: SandboxMode }
  }
}
