import { boundIssues, errorMessage } from '@keel/base'
import { z } from 'zod'
import type { HookDialect, HookPoint } from './config.js'
import type { HookDecisionLabel } from './events.js'
import type { CommandRun } from './run.js'

/** A PreToolUse permission opinion. */
export type PermissionVerdict = 'allow' | 'deny' | 'ask'

/**
 * What one handler run means, read by the rules of its dialect. Every field is optional:
 * an empty outcome is "no opinion" (exit 0 with empty stdout).
 */
export interface HandlerOutcome {
  /** Blocks the action: exit 2 (stderr), `decision: "block"` + `reason`, or a PreToolUse `deny`. */
  block?: string
  /** PreToolUse: `permissionDecision` (or legacy `approve`/`block`). */
  permission?: PermissionVerdict
  /** Why, as the hook said it (`permissionDecisionReason`). */
  permissionReason?: string
  /** PreToolUse: replaces the whole tool input (Claude Code's field names). */
  updatedInput?: Record<string, unknown>
  /** Text for the model (`additionalContext`, or plain stdout on SessionStart/UserPromptSubmit). */
  context: string[]
  /** `continue: false`: stop the agent; the value is `stopReason` (shown to the user). */
  halt?: string
  /** Shown to the user: `systemMessage`, and what a non-blocking error says. */
  notices: string[]
  /** The run failed without deciding anything (exit 1, 126, 127, signal, timeout, bad JSON). */
  error?: string
  /** One word for the log: what this run decided. */
  label: HookDecisionLabel
}

/** Claude Code caps strings handed on at 10,000 characters. */
export const MAX_HOOK_TEXT = 10_000

function cap(text: string): string {
  return text.length <= MAX_HOOK_TEXT
    ? text
    : `${text.slice(0, MAX_HOOK_TEXT)}\n… [${text.length - MAX_HOOK_TEXT} more characters cut]`
}

const jsonOutputSchema = z.looseObject({
  continue: z.boolean().optional(),
  stopReason: z.string().optional(),
  suppressOutput: z.boolean().optional(),
  systemMessage: z.string().optional(),
  decision: z.enum(['block', 'approve', 'allow', 'deny']).optional(),
  reason: z.string().optional(),
  hookSpecificOutput: z
    .looseObject({
      hookEventName: z.string().optional(),
      permissionDecision: z.enum(['allow', 'deny', 'ask', 'defer']).optional(),
      permissionDecisionReason: z.string().optional(),
      updatedInput: z.record(z.string(), z.unknown()).optional(),
      additionalContext: z.string().optional(),
    })
    .optional(),
})

const plainTextIsContext = new Set<HookPoint>(['SessionStart', 'UserPromptSubmit'])

function firstLine(text: string): string {
  const line = text.trim().split('\n')[0] ?? ''
  return line.length > 300 ? `${line.slice(0, 300)}…` : line
}

/**
 * Reads one handler run the way Claude Code (or Codex, for `codex` handlers) does:
 * - exit 0: stdout whose first non-blank character is `{` is JSON output; other text is
 *   model context on SessionStart/UserPromptSubmit only; empty is no opinion. JSON that does
 *   not parse or has mistyped fields is a non-blocking error — never a decision.
 * - exit 2: a block, reason = stderr (or the JSON `reason` / `permissionDecisionReason`).
 * - anything else (1, 126, 127, a signal, a timeout, a launch failure): a non-blocking error
 *   shown to the user with stderr's first line; the action proceeds.
 */
export function interpretRun(point: HookPoint, dialect: HookDialect, run: CommandRun): HandlerOutcome {
  const outcome: HandlerOutcome = { context: [], notices: [], label: 'none' }
  const fail = (message: string, label: 'error' | 'timeout' | 'cancelled' = 'error'): HandlerOutcome => {
    outcome.error = message
    outcome.notices.push(message)
    outcome.label = label
    return outcome
  }
  if (run.spawnError !== undefined) return fail(`${point} hook could not start: ${run.spawnError}`)
  if (run.aborted) return fail(`${point} hook was stopped: the turn was cancelled`, 'cancelled')
  if (run.timedOut)
    return fail(`${point} hook timed out after ${run.durationMs} ms; its output was discarded`, 'timeout')
  if (run.exitCode === undefined) return fail(`${point} hook was killed by ${run.signal ?? 'a signal'}`)
  if (run.exitCode === 2) {
    const reason = run.stderr.trim()
    if (reason === '' && dialect === 'codex') return fail(`${point} hook exited 2 without a reason on stderr`)
    outcome.block = cap(reason === '' ? `${point} hook blocked (exit 2) without giving a reason` : reason)
    outcome.label = 'block'
    if (point === 'PreToolUse') {
      outcome.permission = 'deny'
      outcome.label = 'deny'
    }
    return outcome
  }
  if (run.exitCode !== 0) {
    const line = firstLine(run.stderr)
    return fail(`${point} hook error (exit ${run.exitCode})${line === '' ? '' : `: ${line}`}`)
  }
  const text = run.stdout.trim()
  if (text === '') return outcome
  const looksJson = text.startsWith('{') || (dialect === 'codex' && text.startsWith('['))
  if (!looksJson) {
    if (plainTextIsContext.has(point)) {
      outcome.context.push(cap(text))
      outcome.label = 'context'
    } else if (dialect === 'codex' && point === 'Stop') {
      return fail('Stop hook printed plain text; Codex hooks must print JSON or nothing here')
    }
    return outcome
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    return fail(`${point} hook printed invalid JSON (${errorMessage(error)}); ignored`)
  }
  const result = jsonOutputSchema.safeParse(parsed)
  if (!result.success) {
    const issue = boundIssues(result.error.issues).issues[0]!
    return fail(`${point} hook JSON: ${issue.path || '(top level)'}: ${issue.message}; ignored`)
  }
  return readJson(point, dialect, result.data, outcome)
}

function readJson(
  point: HookPoint,
  dialect: HookDialect,
  json: z.output<typeof jsonOutputSchema>,
  outcome: HandlerOutcome,
): HandlerOutcome {
  if (json.systemMessage !== undefined) outcome.notices.push(cap(json.systemMessage))
  const specific = json.hookSpecificOutput
  const forThisPoint =
    specific !== undefined && (specific.hookEventName === undefined || specific.hookEventName === point)
  if (specific !== undefined && !forThisPoint) {
    outcome.notices.push(`${point} hook: hookSpecificOutput is for ${specific.hookEventName}; ignored`)
  }
  if (forThisPoint && specific.additionalContext !== undefined && specific.additionalContext !== '') {
    outcome.context.push(cap(specific.additionalContext))
    outcome.label = 'context'
  }
  if (point === 'PreToolUse') {
    let verdict: PermissionVerdict | undefined
    let reason = forThisPoint ? specific.permissionDecisionReason : undefined
    if (
      forThisPoint &&
      specific.permissionDecision !== undefined &&
      specific.permissionDecision !== 'defer'
    ) {
      verdict = specific.permissionDecision
    } else if (json.decision === 'approve' || json.decision === 'allow') {
      verdict = 'allow'
      reason ??= json.reason
    } else if (json.decision === 'block' || json.decision === 'deny') {
      verdict = 'deny'
      reason ??= json.reason
    }
    const updated = forThisPoint ? specific.updatedInput : undefined
    if (dialect === 'codex') {
      // Codex honours deny (with a reason) and allow only as a rewrite; ask and bare allow are ignored.
      if (verdict === 'ask' || (verdict === 'allow' && updated === undefined)) verdict = undefined
      if (verdict === 'deny' && (reason === undefined || reason.trim() === '')) {
        outcome.notices.push('PreToolUse hook denied without a reason; Codex ignores such a deny')
        verdict = undefined
      }
    }
    if (verdict !== undefined) {
      outcome.permission = verdict
      if (reason !== undefined) outcome.permissionReason = cap(reason)
      outcome.label = verdict
      if (verdict === 'deny') outcome.block = cap(reason ?? 'denied by a PreToolUse hook')
      if (updated !== undefined && verdict !== 'deny') outcome.updatedInput = updated
    }
  } else if (json.decision === 'block') {
    const blocking = new Set<HookPoint>([
      'UserPromptSubmit',
      'PostToolUse',
      'PostToolUseFailure',
      'Stop',
      'PreCompact',
    ])
    if (blocking.has(point)) {
      if (point === 'Stop' && (json.reason === undefined || json.reason.trim() === '')) {
        outcome.notices.push('Stop hook blocked without a reason; a reason is required, so it is ignored')
      } else {
        outcome.block = cap(json.reason ?? `${point} hook blocked`)
        outcome.label = 'block'
      }
    }
  }
  // Codex ignores continue:false on PreToolUse ("unsupported").
  if (json.continue === false && !(dialect === 'codex' && point === 'PreToolUse')) {
    outcome.halt = json.stopReason ?? `a ${point} hook stopped the agent`
    outcome.label = 'halt'
  }
  return outcome
}
