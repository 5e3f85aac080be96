import type { HandlerResult, HookEngine } from './engine.js'
import { fromHookInput, hookToolName, type ToolResultText, toHookInput, toHookResponse } from './mapping.js'
import type { PermissionVerdict } from './outcome.js'

/** What every point's combined result carries besides its decision. */
export interface HookReport {
  /** Text for the model, from every handler, in configuration order. */
  readonly context: readonly string[]
  /** For the user: `systemMessage`s and non-blocking errors. */
  readonly notices: readonly string[]
  /** A handler printed `continue: false`: stop the agent; the value is its `stopReason`. */
  readonly halt?: string
}

function report(results: readonly HandlerResult[]): HookReport {
  const halt = results.find((r) => r.outcome.halt !== undefined)?.outcome.halt
  return {
    context: results.flatMap((r) => r.outcome.context),
    notices: results.flatMap((r) => r.outcome.notices),
    ...(halt === undefined ? {} : { halt }),
  }
}

function blocks(results: readonly HandlerResult[]): string[] {
  return results.flatMap((r) => (r.outcome.block === undefined ? [] : [r.outcome.block]))
}

/** A tool call as hooks see it, with Keel's own tool name and input. */
export interface HookToolCall {
  readonly turn: number
  readonly callId: string
  /** Keel's tool name (`bash`); scripts see the mapped name (`Bash`). */
  readonly toolName: string
  /** Keel's validated input; scripts see the mapped fields. */
  readonly input: unknown
  /** Keel tool → hook name overrides, beside the built-in table. */
  readonly toolNames?: Readonly<Record<string, string>>
}

/** The combined PreToolUse result. */
export interface PreToolUseResult extends HookReport {
  /** The strictest opinion (deny > ask > allow); absent when no handler had one. */
  readonly decision?: PermissionVerdict
  /** The reasons given for the winning decision, joined by blank lines. */
  readonly reason?: string
  /** The replacement input (Keel's field names), from the last handler in configuration order that gave one. */
  readonly updatedInput?: unknown
}

const strictness: Record<PermissionVerdict, number> = { allow: 0, ask: 1, deny: 2 }

function toolFields(engine: HookEngine, call: HookToolCall): Record<string, unknown> {
  return {
    tool_name: hookToolName(call.toolName, call.toolNames),
    tool_input: toHookInput(call.toolName, call.input, engine.projectDir),
    tool_use_id: call.callId,
  }
}

/** Runs PreToolUse for a tool call and combines: deny > ask > allow; a halt always wins. */
export async function preToolUse(engine: HookEngine, call: HookToolCall): Promise<PreToolUseResult> {
  const fields = toolFields(engine, call)
  const results = await engine.run({
    point: 'PreToolUse',
    turn: call.turn,
    matchValue: fields.tool_name as string,
    fields,
  })
  let decision: PermissionVerdict | undefined
  for (const { outcome } of results) {
    if (
      outcome.permission &&
      (decision === undefined || strictness[outcome.permission] > strictness[decision])
    ) {
      decision = outcome.permission
    }
  }
  const reasons = results.flatMap(({ outcome }) =>
    outcome.permission === decision
      ? [decision === 'deny' ? outcome.block : outcome.permissionReason].filter((r): r is string => !!r)
      : [],
  )
  const updated = decision === 'deny' ? undefined : results.findLast((r) => r.outcome.updatedInput)
  const base = report(results)
  return {
    ...base,
    ...(decision === undefined ? {} : { decision }),
    ...(reasons.length > 0 ? { reason: reasons.join('\n\n') } : {}),
    ...(updated ? { updatedInput: fromHookInput(call.toolName, updated.outcome.updatedInput) } : {}),
  }
}

/** The combined PostToolUse / PostToolUseFailure result. */
export interface PostToolUseResult extends HookReport {
  /** For the model beside the tool's result (exit 2 stderr, `decision: "block"` reasons). */
  readonly feedback: readonly string[]
  /** Codex handlers' `decision: "block"` replaces the result with this reason. */
  readonly replaceResult?: string
}

/** Runs PostToolUse (or PostToolUseFailure when the tool failed) after a tool ran. */
export async function postToolUse(
  engine: HookEngine,
  call: HookToolCall,
  result: ToolResultText,
): Promise<PostToolUseResult> {
  const fields = toolFields(engine, call)
  const point = result.isError ? 'PostToolUseFailure' : 'PostToolUse'
  const results = await engine.run({
    point,
    turn: call.turn,
    matchValue: fields.tool_name as string,
    fields: result.isError
      ? { ...fields, error: result.text }
      : { ...fields, tool_response: toHookResponse(call.toolName, fields.tool_input, result) },
  })
  const codexBlocks = blocks(results.filter((r) => r.handler.dialect === 'codex'))
  const feedback = blocks(results.filter((r) => r.handler.dialect !== 'codex'))
  return {
    ...report(results),
    feedback,
    ...(codexBlocks.length > 0 ? { replaceResult: codexBlocks.join('\n\n') } : {}),
  }
}

/** The combined UserPromptSubmit result. */
export interface PromptSubmitResult extends HookReport {
  /** The prompt is refused; the reason is for the user only (Claude Code erases the prompt). */
  readonly block?: string
}

/** Runs UserPromptSubmit for a prompt: any block refuses it; all context is kept. */
export async function userPromptSubmit(
  engine: HookEngine,
  info: { turn: number; prompt: string },
): Promise<PromptSubmitResult> {
  const results = await engine.run({
    point: 'UserPromptSubmit',
    turn: info.turn,
    fields: { prompt: info.prompt },
  })
  const reasons = blocks(results)
  const base = report(results)
  const block = reasons.length > 0 ? reasons.join('\n\n') : base.halt
  return { ...base, ...(block === undefined ? {} : { block }) }
}

/** Runs SessionStart (`source` startup, resume or compact); plain stdout and `additionalContext` are context. */
export async function sessionStart(
  engine: HookEngine,
  info: { source: 'startup' | 'resume' | 'compact' },
): Promise<HookReport> {
  return report(
    await engine.run({ point: 'SessionStart', matchValue: info.source, fields: { source: info.source } }),
  )
}

/** The combined PreCompact result. */
export interface PreCompactResult extends HookReport {
  /** Compaction is cancelled (exit 2 or `decision: "block"`). */
  readonly cancel?: string
}

/** Runs PreCompact; Keel's `overflow` trigger is `auto` to scripts. */
export async function preCompact(
  engine: HookEngine,
  info: { trigger: 'auto' | 'manual' | 'overflow'; instructions?: string },
): Promise<PreCompactResult> {
  const trigger = info.trigger === 'manual' ? 'manual' : 'auto'
  const results = await engine.run({
    point: 'PreCompact',
    matchValue: trigger,
    fields: { trigger, custom_instructions: info.instructions ?? '' },
  })
  const reasons = blocks(results)
  return { ...report(results), ...(reasons.length > 0 ? { cancel: reasons.join('\n\n') } : {}) }
}

/** The combined Stop result. */
export interface StopResult extends HookReport {
  /** Keep going: the model's next instruction (every blocking reason, joined by a blank line). */
  readonly continueWith?: string
}

/** Runs Stop; any block keeps the agent going unless a handler halted it. */
export async function stop(
  engine: HookEngine,
  info: { turn: number; stopHookActive: boolean; lastAssistantMessage?: string },
): Promise<StopResult> {
  const results = await engine.run({
    point: 'Stop',
    turn: info.turn,
    fields: {
      stop_hook_active: info.stopHookActive,
      last_assistant_message: info.lastAssistantMessage ?? null,
    },
  })
  const base = report(results)
  const reasons = blocks(results)
  return {
    ...base,
    ...(reasons.length > 0 && base.halt === undefined ? { continueWith: reasons.join('\n\n') } : {}),
  }
}

/**
 * Runs SessionEnd. Keel's reasons map to Claude Code's: `close` → `prompt_input_exit`,
 * `error` → `other`. Nothing can be blocked; errors are notices.
 */
export async function sessionEnd(
  engine: HookEngine,
  info: { reason: 'close' | 'error' },
): Promise<HookReport> {
  const reason = info.reason === 'close' ? 'prompt_input_exit' : 'other'
  return report(await engine.run({ point: 'SessionEnd', matchValue: reason, fields: { reason } }))
}
