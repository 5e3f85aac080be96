// A child's run policy: never wider than its parent's. Pure, table-tested.
import type { ApprovalPolicy, RunPolicy, SandboxMode } from '@keel/user-approval'
import type { AgentDefinition } from './definition.js'

const SANDBOX_WIDTH: Readonly<Record<SandboxMode, number>> = {
  read_only: 0,
  workspace_write: 1,
  danger_full_access: 2,
}

/** What a definition asks of the child's policy: `permissionMode`, narrowed further by `approvalPolicy` / `sandboxMode`. */
export function requestedPolicy(
  definition: Pick<AgentDefinition, 'permissionMode' | 'approvalPolicy' | 'sandboxMode'>,
): Partial<RunPolicy> {
  const requested: Partial<RunPolicy> = {}
  if (definition.permissionMode === 'plan') requested.sandboxMode = 'read_only'
  if (definition.permissionMode === 'dontAsk') requested.approvalPolicy = 'never'
  if (definition.sandboxMode !== undefined) {
    requested.sandboxMode = narrowerSandbox(
      requested.sandboxMode ?? definition.sandboxMode,
      definition.sandboxMode,
    )
  }
  if (definition.approvalPolicy !== undefined) requested.approvalPolicy = definition.approvalPolicy
  return requested
}

function narrowerSandbox(a: SandboxMode, b: SandboxMode): SandboxMode {
  return SANDBOX_WIDTH[a] <= SANDBOX_WIDTH[b] ? a : b
}

/**
 * The policy a child runs under, given its parent's policy now and what it asks for:
 * - sandbox: the narrower of the two modes;
 * - approval: a parent that asks (`on_request`) lets the child choose (`strict` asks about
 *   more, `never` refuses instead of asking); a `strict` parent keeps its child `strict`
 *   (a `never` child would run unasked what the parent asks about), and a `never` parent
 *   keeps its child `never` (a child that asks would reach a person the parent may not).
 * Also re-clamps a running child after the parent switched: `childPolicy(parentNow, childNow)`.
 */
export function childPolicy(parent: RunPolicy, requested: Partial<RunPolicy>): RunPolicy {
  const approvalPolicy: ApprovalPolicy =
    parent.approvalPolicy === 'on_request'
      ? (requested.approvalPolicy ?? 'on_request')
      : parent.approvalPolicy
  return {
    approvalPolicy,
    sandboxMode: narrowerSandbox(parent.sandboxMode, requested.sandboxMode ?? parent.sandboxMode),
  }
}
