import { type Projection, registerProjection, type Session } from '@keel/session'
import type { RunPolicy } from './decide.js'
import { approvalPolicySchema, sandboxModeSchema } from './events.generated.js'
import type { ApprovalPolicy, SandboxMode, SessionRule } from './events.js'

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

/**
 * The user's "allow for this session" rules: the `rule` of every `approval/decided` with
 * outcome `allowed-session`, in order, without duplicates. Folded from the log, so a resumed
 * session keeps them and a fork inherits those made before the fork point.
 */
export const sessionRulesProjection: Projection<readonly SessionRule[]> = registerProjection<
  readonly SessionRule[]
>({
  name: '@keel/user-approval/session-rules',
  init: () => [],
  apply: (rules, event) => {
    if (event.type !== 'approval/decided' || event.data.outcome !== 'allowed-session' || !event.data.rule) {
      return rules
    }
    const rule = event.data.rule
    if (rules.some((r) => r.toolName === rule.toolName && r.command === rule.command)) return rules
    return [...rules, rule]
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

const published = new WeakMap<Session, () => RunPolicy>()

/**
 * The policy in force for `session` while an approval plugin runs on it: its configured
 * default overlaid by the switches in the log (what {@link effectivePolicy} computes for
 * that plugin). Undefined when no approval plugin runs on the session. Other plugins read
 * it here (e.g. a compaction carries it into its summary) because a configured default
 * that was never switched is not in the log.
 */
export function activePolicy(session: Session): RunPolicy | undefined {
  return published.get(session)?.()
}

/** Publishes the approval plugin's policy for {@link activePolicy}; returns the unpublishing function. */
export function publishActivePolicy(session: Session, policy: () => RunPolicy): () => void {
  published.set(session, policy)
  return () => {
    if (published.get(session) === policy) published.delete(session)
  }
}

/** Records a switch of the approval policy (validated; `/policy` in a UI). */
export function setApprovalPolicy(session: Session, approvalPolicy: ApprovalPolicy): void {
  session.append('approval/policy', { approvalPolicy: approvalPolicySchema.parse(approvalPolicy) })
}

/** Records a switch of the sandbox mode (validated; `/sandbox` in a UI). */
export function setSandboxMode(session: Session, sandboxMode: SandboxMode): void {
  session.append('sandbox/mode', { sandboxMode: sandboxModeSchema.parse(sandboxMode) })
}
