import { errorMessage } from '@keel/base'
import type { ToolOutput } from '@keel/tools'
import type {
  AddedContext,
  AfterToolDecision,
  BeforeCompactionDecision,
  BeforeCompactionInfo,
  BeforeStepDecision,
  BeforeStepInfo,
  BeforeToolDecision,
  Interceptors,
  ModelErrorDecision,
  ModelErrorInfo,
  PromptSubmitDecision,
  PromptSubmitInfo,
  SessionEndInfo,
  SessionStartInfo,
  ToolCallInfo,
  TurnStoppingDecision,
  TurnStoppingInfo,
} from './plugin.js'
import { MAX_INPUT_REWRITES } from './plugin.js'

/** A decision and the plugin that made it (absent when every handler took the default). */
export interface Decided<D> {
  readonly decision: D
  readonly plugin?: string
}

/** One plugin's interceptors. */
export interface Registered {
  readonly plugin: string
  readonly interceptors: Interceptors
}

/** Reports an interceptor failure that has no decision to fail closed into. */
export type Report = (entry: { readonly code: string; readonly message: string }) => void

export function thrown(plugin: string, point: string, error: unknown): string {
  return `the ${point} interceptor of plugin '${plugin}' threw: ${errorMessage(error)}`
}

/*
 * Every runner below visits the plugins in order. An interceptor that throws fails closed:
 * before a step it rejects the step, before a tool it votes deny (`INTERCEPTOR_FAILED`), after a
 * tool it blocks the output, at a prompt it blocks the message, before a compaction it
 * cancels it; where there is nothing to refuse (turn stopping, session start and end, model
 * error) the default holds and the failure is reported.
 */

export async function runBeforeStep(
  list: readonly Registered[],
  info: BeforeStepInfo,
): Promise<Decided<BeforeStepDecision>> {
  for (const { plugin, interceptors } of list) {
    if (!interceptors.beforeStep) continue
    try {
      const decision = await interceptors.beforeStep(info)
      if (decision.action === 'reject') return { decision, plugin }
    } catch (error) {
      return { decision: { action: 'reject', reason: thrown(plugin, 'beforeStep', error) }, plugin }
    }
  }
  return { decision: { action: 'enter' } }
}

/**
 * What the agent does with a replacement input a `beforeTool` decision carried: the call
 * with that input (validated, facts recomputed), a deny when it is not acceptable, or
 * `undefined` when it equals the current input (no rewrite).
 */
export type Reinput = (
  info: ToolCallInfo,
  input: unknown,
  plugin: string,
) => { readonly info: ToolCallInfo } | { readonly deny: BeforeToolDecision & { action: 'deny' } } | undefined

/** The `beforeTool` verdict, the call it is about (the last rewrite), and who rewrote it. */
export interface BeforeToolVerdict extends Decided<BeforeToolDecision> {
  readonly info: ToolCallInfo
  /** The plugins that rewrote the input, in order. */
  readonly rewrittenBy: readonly string[]
}

type Vote = Decided<BeforeToolDecision> & { readonly decision: { action: 'deny' | 'ask' } }

/**
 * Every plugin votes on the call, in setup order — also after an earlier one denied, so
 * each sees every call (a PreToolUse hook logs a call the sandbox refuses). The first
 * `deny` wins, else the first `ask`, else `allow`. A vote carrying an `input` that
 * `reinput` accepts as a rewrite restarts the vote from the first plugin with the new call,
 * so every vote that counts is about the input that runs; past `MAX_INPUT_REWRITES` the
 * call is denied. A throwing voter votes `deny` (`INTERCEPTOR_FAILED`).
 */
export async function runBeforeTool(
  list: readonly Registered[],
  first: ToolCallInfo,
  reinput: Reinput,
): Promise<BeforeToolVerdict> {
  let info = first
  const rewrittenBy: string[] = []
  restart: for (;;) {
    let deny: Vote | undefined
    let ask: Vote | undefined
    for (const { plugin, interceptors } of list) {
      if (!interceptors.beforeTool) continue
      let decision: BeforeToolDecision
      try {
        decision = await interceptors.beforeTool(info)
      } catch (error) {
        const reason = thrown(plugin, 'beforeTool', error)
        deny ??= { decision: { action: 'deny', reason, errorCode: 'INTERCEPTOR_FAILED' }, plugin }
        continue
      }
      if (decision.action !== 'deny' && decision.input !== undefined) {
        const next = reinput(info, decision.input, plugin)
        if (next && 'deny' in next) {
          deny ??= { decision: next.deny, plugin }
          continue
        }
        if (next) {
          rewrittenBy.push(plugin)
          if (rewrittenBy.length > MAX_INPUT_REWRITES) {
            const reason = `the input of ${info.call.name} was rewritten more than ${MAX_INPUT_REWRITES} times (by ${rewrittenBy.map((p) => `'${p}'`).join(', ')}); a rewriting plugin must return the input unchanged when asked again`
            return {
              decision: { action: 'deny', reason, errorCode: 'TOOL_INPUT_REWRITE_LOOP' },
              plugin,
              info,
              rewrittenBy,
            }
          }
          info = next.info
          continue restart
        }
      }
      if (decision.action === 'deny') deny ??= { decision, plugin }
      else if (decision.action === 'ask') {
        const { input: _input, ...vote } = decision
        ask ??= { decision: vote, plugin }
      }
    }
    const won = deny ?? ask
    return won ? { ...won, info, rewrittenBy } : { decision: { action: 'allow' }, info, rewrittenBy }
  }
}

export async function runAfterTool(
  list: readonly Registered[],
  info: ToolCallInfo & { readonly output: ToolOutput },
): Promise<Decided<AfterToolDecision>> {
  for (const { plugin, interceptors } of list) {
    if (!interceptors.afterTool) continue
    try {
      const decision = await interceptors.afterTool(info)
      if (decision.action === 'block') return { decision, plugin }
    } catch (error) {
      return { decision: { action: 'block', reason: thrown(plugin, 'afterTool', error) }, plugin }
    }
  }
  return { decision: { action: 'accept' } }
}

export async function runTurnStopping(
  list: readonly Registered[],
  info: TurnStoppingInfo,
  report: Report,
): Promise<Decided<TurnStoppingDecision>> {
  for (const { plugin, interceptors } of list) {
    if (!interceptors.turnStopping) continue
    try {
      const decision = await interceptors.turnStopping(info)
      if (decision.action === 'continue') return { decision, plugin }
    } catch (error) {
      // A broken stop hook must not keep the turn running forever: the turn stops.
      report({ code: 'INTERCEPTOR_FAILED', message: thrown(plugin, 'turnStopping', error) })
    }
  }
  return { decision: { action: 'stop' } }
}

export async function runSessionStart(
  list: readonly Registered[],
  info: SessionStartInfo,
  report: Report,
): Promise<AddedContext[]> {
  const added: AddedContext[] = []
  for (const { plugin, interceptors } of list) {
    if (!interceptors.sessionStart) continue
    try {
      const decision = await interceptors.sessionStart(info)
      if (decision.context) added.push({ plugin, text: decision.context })
    } catch (error) {
      report({ code: 'INTERCEPTOR_FAILED', message: thrown(plugin, 'sessionStart', error) })
    }
  }
  return added
}

export async function runPromptSubmit(
  list: readonly Registered[],
  info: PromptSubmitInfo,
): Promise<{ blocked?: Decided<{ action: 'block'; reason: string }>; context: AddedContext[] }> {
  const context: AddedContext[] = []
  for (const { plugin, interceptors } of list) {
    if (!interceptors.promptSubmit) continue
    let decision: PromptSubmitDecision
    try {
      decision = await interceptors.promptSubmit(info)
    } catch (error) {
      decision = { action: 'block', reason: thrown(plugin, 'promptSubmit', error) }
    }
    if (decision.action === 'block') return { blocked: { decision, plugin }, context }
    if (decision.context) context.push({ plugin, text: decision.context })
  }
  return { context }
}

export async function runSessionEnd(
  list: readonly Registered[],
  info: SessionEndInfo,
  report: Report,
): Promise<void> {
  for (const { plugin, interceptors } of list) {
    if (!interceptors.sessionEnd) continue
    try {
      await interceptors.sessionEnd(info)
    } catch (error) {
      report({ code: 'INTERCEPTOR_FAILED', message: thrown(plugin, 'sessionEnd', error) })
    }
  }
}

export async function runBeforeCompaction(
  list: readonly Registered[],
  info: BeforeCompactionInfo,
): Promise<Decided<BeforeCompactionDecision>> {
  let instructions = info.instructions
  for (const { plugin, interceptors } of list) {
    if (!interceptors.beforeCompaction) continue
    try {
      const decision = await interceptors.beforeCompaction(
        instructions === undefined ? { trigger: info.trigger } : { trigger: info.trigger, instructions },
      )
      if (decision.action === 'cancel') return { decision, plugin }
      if (decision.instructions !== undefined) instructions = decision.instructions
    } catch (error) {
      return { decision: { action: 'cancel', reason: thrown(plugin, 'beforeCompaction', error) }, plugin }
    }
  }
  return {
    decision: instructions === undefined ? { action: 'proceed' } : { action: 'proceed', instructions },
  }
}

export async function runModelError(
  list: readonly Registered[],
  info: ModelErrorInfo,
  report: Report,
): Promise<Decided<ModelErrorDecision>> {
  for (const { plugin, interceptors } of list) {
    if (!interceptors.modelError) continue
    try {
      const decision = await interceptors.modelError(info)
      if (decision.action === 'retry') return { decision, plugin }
    } catch (error) {
      report({ code: 'INTERCEPTOR_FAILED', message: thrown(plugin, 'modelError', error) })
    }
  }
  return { decision: { action: 'fail' } }
}
