import { definePlugin, type PluginContext, type PluginDefinition } from '@keel/agent'
import { defineTool, type Tool } from '@keel/tools'
import { z } from 'zod'
import { ownedEventTypes } from './events.generated.js'
import {
  EXIT_PLAN_TOOL,
  PLAN_MODE_OFF,
  PLAN_MODE_ON,
  planForDisplay,
  planModeProjection,
  planModeVote,
} from './mode.js'
import type { PlanModeService } from './services.js'

/** The plan-mode plugin's config, as a preset holds it. */
export const planModeConfigSchema = z.strictObject({
  /** The longest plan `exit_plan_mode` accepts, in characters. */
  maxPlanChars: z.number().int().min(100).max(100_000).default(20_000),
})

/** The validated config of {@link planModePlugin}. */
export type PlanModeConfig = z.output<typeof planModeConfigSchema>

/** Where the plugin's developer messages come from. */
export const PLAN_MODE_SOURCE = 'plan-mode'

function exitPlanTool(ctx: PluginContext<PlanModeConfig>): Tool<{ plan: string }> {
  return defineTool({
    name: EXIT_PLAN_TOOL,
    description:
      'In plan mode: propose your finished plan and ask the user to approve it. On approval plan mode ends and ' +
      'you carry the plan out; on rejection you get the reason and keep planning. Outside plan mode it is refused.',
    inputSchema: z.strictObject({
      plan: z
        .string()
        .min(1)
        .max(ctx.config.maxPlanChars)
        .describe('The plan, in Markdown: concrete steps, the files to change, how to check the result.'),
    }),
    // It changes nothing but the mode, so plan mode lets it through to the approval question.
    annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: false },
    async call() {
      // Runs only once the person approved the plan (the vote asked them).
      if (ctx.session.project(planModeProjection)) ctx.session.append('plan/mode', { active: false })
      return 'The user approved the plan. Plan mode is off: carry the plan out now, step by step.'
    },
  })
}

/**
 * Plan mode. While `plan/mode` is active, its `beforeTool` vote refuses every tool not
 * annotated read-only (`PLAN_MODE_READ_ONLY`) — the first deny of the permission chain wins,
 * whatever else votes — and `exit_plan_mode` asks the person to approve the model's plan:
 * approved, the tool records `plan/mode { active: false }`; rejected, the model gets the
 * reason (`USER_REJECTED`) and keeps planning; with nobody to ask, it fails closed and plan
 * mode stays. `/plan` enters it (`/plan <task>` also queues the task), `/plan off` leaves
 * it; each switch tells the model with a developer message, repeated after a compaction
 * while plan mode lasts. Provides `plan.mode`.
 */
export const planModePlugin: PluginDefinition<PlanModeConfig> = definePlugin<PlanModeConfig>({
  name: '@keel/plan-mode',
  config: planModeConfigSchema,
  events: ownedEventTypes,
  provides: ['plan.mode'],
  setup(ctx) {
    const { session } = ctx
    const active = () => session.project(planModeProjection)
    const tell = (text: string) =>
      ctx.inject({ role: 'developer', content: [{ type: 'text', text }] }, { source: PLAN_MODE_SOURCE })
    const service: PlanModeService = {
      active,
      set(next) {
        if (active() === next) return false
        session.append('plan/mode', { active: next })
        tell(next ? PLAN_MODE_ON : PLAN_MODE_OFF)
        return true
      },
    }
    ctx.provide('plan.mode', service)
    ctx.registerTool(exitPlanTool(ctx))
    ctx.intercept({
      beforeTool(info) {
        const plan = info.tool.name === EXIT_PLAN_TOOL ? (info.input as { plan?: string }).plan : undefined
        const vote = planModeVote(active(), {
          toolName: info.tool.name,
          annotations: info.tool.annotations,
          ...(plan === undefined ? {} : { plan }),
        })
        // The whole plan goes to the person's history before the (short) question.
        if (vote.action === 'ask' && plan !== undefined) ctx.display('plan', planForDisplay(plan))
        return vote
      },
      sessionStart({ source }) {
        return source === 'compact' && active()
          ? { action: 'continue', context: PLAN_MODE_ON }
          : { action: 'continue' }
      },
    })
    ctx.registerCommand('plan', {
      description:
        'plan mode: only read-only tools run until you approve the model’s plan (`/plan off` leaves)',
      usage: '[on|off|status|<task>]',
      async run(args) {
        const wanted = args.trim()
        if (wanted === 'status')
          return active() ? 'plan mode is on (/plan off leaves it)' : 'plan mode is off'
        if (wanted === 'off') return service.set(false) ? 'plan mode off' : 'plan mode was not on'
        const entered = service.set(true)
        const state = entered
          ? 'plan mode on: only read-only tools run; the model will ask you to approve its plan'
          : 'plan mode is already on'
        if (wanted === '' || wanted === 'on') return state
        ctx.enqueue({ role: 'user', content: [{ type: 'text', text: wanted }] })
        return `${state}; task queued`
      },
    })
    if (active()) ctx.display('plan-mode', 'plan mode is on: only read-only tools run (/plan off leaves it)')
  },
})
