import type { RunPolicy } from './decide.js'
import type { ApprovalPolicy, SandboxMode } from './events.js'
import type { CommandLimits, OsSandboxStatus } from './os-sandbox.js'

/**
 * `approval.policy`: the run policy in force for this agent — the configured default
 * overlaid by the latest `approval/policy` / `sandbox/mode` in the log — and the way to
 * switch it (a logged act, so it survives resume and is inherited by a fork).
 */
export interface ApprovalPolicyService {
  /** The policy in force now. */
  current(): RunPolicy
  /** Records a switch of the approval policy (`approval/policy`); listeners hear it. */
  setApprovalPolicy(approvalPolicy: ApprovalPolicy): void
  /** Records a switch of the sandbox mode (`sandbox/mode`); listeners hear it. */
  setSandboxMode(sandboxMode: SandboxMode): void
  /**
   * Calls `listener` with the policy in force after each switch appended to the session,
   * whoever appended it; returns the function that stops listening.
   */
  subscribe(listener: (policy: RunPolicy) => void): () => void
}

/**
 * `sandbox.limits`: what a shell command of this agent may touch inside the OS sandbox,
 * read by {@link sandboxShellTool}-wrapped tools through `ToolContext.services`.
 */
export interface SandboxLimitsService {
  /**
   * The limits for a command run now: the sandbox mode in force, the writable roots, and
   * every `.git`/`.keel` at any depth under them (found by a bounded scan; past its bound
   * this throws `SANDBOX_SCAN_LIMIT` and the command does not run).
   */
  current(): Promise<CommandLimits>
  /** Whether an OS sandbox works here (probed once per process), and why not. */
  status(): Promise<OsSandboxStatus>
}

declare module '@keel/tools' {
  interface ServiceMap {
    /** The approval plugin's run policy: read it, switch it, hear switches. */
    'approval.policy': ApprovalPolicyService
    /** The OS sandbox limits of shell commands, from the approval plugin. */
    'sandbox.limits': SandboxLimitsService
  }
}
