import { type Projection, registerProjection, type Session } from '@keel/session'
import type { RunPolicy } from './decide.js'
import type { ApprovalPolicy, SandboxMode } from './events.js'

/** The policy switches recorded in the log: each the latest `approval/policy` / `sandbox/mode`, or absent. */
export interface RecordedPolicy {
  approvalPolicy?: ApprovalPolicy
  sandboxMode?: SandboxMode
}

/** Folds the policy switches; the latest of each kind wins. */
export const recordedPolicyProjection: Projection<RecordedPolicy> = registerProjection<RecordedPolicy>({
  name: '@keel/user-approval/policy',
  init: () => ({}),
  apply: (state, event) => {
    if (event.type === 'approval/policy') return { ...state, approvalPolicy: event.data.approvalPolicy }
    if (event.type === 'sandbox/mode') return { ...state, sandboxMode: event.data.sandboxMode }
    return state
  },
  checkpoint: { version: 1 },
})

/** The policy in force: the latest switch in the log over the configured default. */
export function effectivePolicy(session: Session, configured: RunPolicy): RunPolicy {
  const recorded = session.project(recordedPolicyProjection)
  return {
    approvalPolicy: recorded.approvalPolicy ?? configured.approvalPolicy,
    sandboxMode: recorded.sandboxMode ?? configured.sandboxMode,
  }
}

/**
 * Records a switch of the approval policy (`/policy` in a UI). The log checks the value: one
 * that is no policy is refused with `EVENT_DATA_INVALID`, and nothing is recorded.
 */
export function setApprovalPolicy(session: Session, approvalPolicy: ApprovalPolicy): void {
  session.append('approval/policy', { approvalPolicy })
}

/**
 * Records a switch of the sandbox mode (`/sandbox` in a UI). The log checks the value: one
 * that is no mode is refused with `EVENT_DATA_INVALID`, and nothing is recorded.
 */
export function setSandboxMode(session: Session, sandboxMode: SandboxMode): void {
  session.append('sandbox/mode', { sandboxMode })
}
