import { createHash } from 'node:crypto'
import type { BeforeToolDecision } from '@keel/agent'
import { type Projection, registerProjection } from '@keel/session'
import type { ToolAnnotations } from '@keel/tools'

/** The tool the model calls to propose its plan and ask to leave plan mode. */
export const EXIT_PLAN_TOOL = 'exit_plan_mode'

/** The most of a plan shown to the person before the question. */
export const MAX_PLAN_SHOWN = 8000

/** The most of a plan quoted in the question itself (it is shown in full just before). */
const PLAN_QUOTED = 240

/** Folds `plan/mode`: the latest wins; a log without one is not in plan mode. */
export const planModeProjection: Projection<boolean> = registerProjection<boolean>({
  name: '@keel/plan-mode',
  init: () => false,
  apply: (active, event) => (event.type === 'plan/mode' ? event.data.active : active),
  checkpoint: { version: 1 },
})

/** What the vote needs to know about one call. */
export interface PlanCall {
  readonly toolName: string
  readonly annotations: ToolAnnotations
  /** The plan, for an `exit_plan_mode` call. */
  readonly plan?: string
}

/**
 * Plan mode's vote on one tool call, a pure function of the mode and the call:
 * - in plan mode, a tool not annotated read-only is refused (`PLAN_MODE_READ_ONLY`, saying
 *   how to get out: propose the plan with `exit_plan_mode`);
 * - `exit_plan_mode` in plan mode asks the person to approve the plan (the question quotes
 *   its start: the plugin shows the whole plan just before asking, see {@link planForDisplay});
 *   an "allow for this session" covers that exact plan only (its digest is the rule's command);
 * - `exit_plan_mode` outside plan mode is refused (`PLAN_MODE_INACTIVE`): nothing to leave;
 * - anything else is allowed (the other plugins still vote).
 */
export function planModeVote(active: boolean, call: PlanCall): BeforeToolDecision {
  if (call.toolName === EXIT_PLAN_TOOL) {
    if (!active) {
      return {
        action: 'deny',
        errorCode: 'PLAN_MODE_INACTIVE',
        reason: 'plan mode is not on, so there is nothing to leave: carry on with the task',
      }
    }
    const plan = call.plan ?? ''
    const first = plan.trim().split('\n')[0] ?? ''
    const quoted = first.length > PLAN_QUOTED ? `${first.slice(0, PLAN_QUOTED)}…` : first
    return {
      action: 'ask',
      reason: `the model asks to leave plan mode and carry out its plan (shown above: "${quoted}"${plan.trim().includes('\n') ? ' …' : ''}); approve it, or reject it with what to change to keep planning`,
      rule: { toolName: EXIT_PLAN_TOOL, command: `plan sha256:${planDigest(plan)}` },
    }
  }
  if (active && !call.annotations.readOnly) {
    return {
      action: 'deny',
      errorCode: 'PLAN_MODE_READ_ONLY',
      reason: `plan mode is on, and ${call.toolName} is not a read-only tool, so it did not run. Use read-only tools to research, then call ${EXIT_PLAN_TOOL} with your plan to ask the user to approve it; after that, ${call.toolName} can run`,
    }
  }
  return { action: 'allow' }
}

/** The plan as shown to the person before the question: whole, up to {@link MAX_PLAN_SHOWN} characters. */
export function planForDisplay(plan: string): string {
  const body =
    plan.length > MAX_PLAN_SHOWN
      ? `${plan.slice(0, MAX_PLAN_SHOWN)}\n… (${plan.length - MAX_PLAN_SHOWN} more characters: see the exit_plan_mode call in the log)`
      : plan
  return `The model's plan:\n\n${body}`
}

/** The first 16 hex digits of the SHA-256 of a plan: which plan an approval was for. */
export function planDigest(plan: string): string {
  return createHash('sha256').update(plan).digest('hex').slice(0, 16)
}

/** The developer message the model gets when plan mode starts (and again after a compaction while it lasts). */
export const PLAN_MODE_ON =
  `Plan mode is on. Until the user approves a plan, only read-only tools run; any other tool is refused (PLAN_MODE_READ_ONLY). ` +
  `Research the task with the read-only tools, then call ${EXIT_PLAN_TOOL} with your plan: concise, concrete steps, naming the files you will change and how you will check the result. ` +
  'Do not change anything before the plan is approved. If the user rejects it, their reason says what to change: revise the plan and propose it again.'

/** The developer message the model gets when the person leaves plan mode. */
export const PLAN_MODE_OFF =
  'Plan mode is off: the user left it. Tools that change things may run again (the approval policy still applies).'
