import type { PluginContext } from '@keel/agent'
import { elide } from '@keel/base'
import { approvalPolicySchema, sandboxModeSchema } from './events.generated.js'
import type { ApprovalPolicyService } from './services.js'

/** The values in the order people read them (least to most permissive). */
const POLICIES = ['strict', 'on_request', 'never'] as const
const MODES = ['read_only', 'workspace_write', 'danger_full_access'] as const

/** A command that shows the policy in force, or records one of `values` as the new setting. */
function switchCommand<Value extends string>(
  ctx: PluginContext<unknown>,
  policy: ApprovalPolicyService,
  spec: {
    name: string
    what: string
    values: readonly Value[]
    parse: (text: string) => { success: true; data: Value } | { success: false }
    set: (value: Value) => void
  },
): void {
  ctx.registerCommand(spec.name, {
    description: `show or set the ${spec.what} (recorded in the log)`,
    usage: `[${spec.values.join('|')}]`,
    async run(args) {
      const wanted = args.trim()
      if (wanted === '') {
        const { approvalPolicy, sandboxMode } = policy.current()
        return `approval policy ${approvalPolicy}, sandbox mode ${sandboxMode}`
      }
      const parsed = spec.parse(wanted)
      if (!parsed.success)
        return `unknown ${spec.what} ${JSON.stringify(elide(wanted))}: use ${spec.values.join(', ')}`
      spec.set(parsed.data)
      return `${spec.what} set to ${parsed.data}`
    },
  })
}

/**
 * `/policy [strict|on_request|never]` and `/sandbox [read_only|workspace_write|danger_full_access]`:
 * without an argument they show the policy in force; with one they record a switch.
 */
export function registerPolicyCommands(ctx: PluginContext<unknown>, policy: ApprovalPolicyService): void {
  switchCommand(ctx, policy, {
    name: 'policy',
    what: 'approval policy',
    values: POLICIES,
    parse: (text) => approvalPolicySchema.safeParse(text),
    set: (value) => policy.setApprovalPolicy(value),
  })
  switchCommand(ctx, policy, {
    name: 'sandbox',
    what: 'sandbox mode',
    values: MODES,
    parse: (text) => sandboxModeSchema.safeParse(text),
    set: (value) => policy.setSandboxMode(value),
  })
}
