import type { PluginContext } from '@keel/agent'
import { approvalPolicySchema, sandboxModeSchema } from './events.generated.js'
import type { ApprovalPolicyService } from './services.js'

/** The values in the order people read them (least to most permissive). */
const POLICIES = ['strict', 'on_request', 'never'] as const
const MODES = ['read_only', 'workspace_write', 'danger_full_access'] as const

/**
 * `/policy [strict|on_request|never]` and `/sandbox [read_only|workspace_write|danger_full_access]`:
 * without an argument they show the policy in force; with one they record a switch.
 */
export function registerPolicyCommands(ctx: PluginContext<unknown>, policy: ApprovalPolicyService): void {
  const show = () => {
    const { approvalPolicy, sandboxMode } = policy.current()
    return `approval policy ${approvalPolicy}, sandbox mode ${sandboxMode}`
  }
  ctx.registerCommand('policy', {
    description: 'show or set the approval policy (recorded in the log)',
    usage: `[${POLICIES.join('|')}]`,
    async run(args) {
      const wanted = args.trim()
      if (wanted === '') return show()
      const parsed = approvalPolicySchema.safeParse(wanted)
      if (!parsed.success)
        return `unknown approval policy ${JSON.stringify(wanted)}: use ${POLICIES.join(', ')}`
      policy.setApprovalPolicy(parsed.data)
      return `approval policy set to ${parsed.data}`
    },
  })
  ctx.registerCommand('sandbox', {
    description: 'show or set the sandbox mode (recorded in the log)',
    usage: `[${MODES.join('|')}]`,
    async run(args) {
      const wanted = args.trim()
      if (wanted === '') return show()
      const parsed = sandboxModeSchema.safeParse(wanted)
      if (!parsed.success) return `unknown sandbox mode ${JSON.stringify(wanted)}: use ${MODES.join(', ')}`
      policy.setSandboxMode(parsed.data)
      return `sandbox mode set to ${parsed.data}`
    },
  })
}
