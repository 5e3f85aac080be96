// One delegation: a child session in the parent's store, an agent over it built from the
// recorded composition, one turn, and the child's final answer as the parent's tool result.
import type { Agent, AgentObserver, ChildSessions, PluginContext, StoreHandle, TurnResult } from '@keel/agent'
import { errorMessage, errorRecordOf, isKeelError } from '@keel/base'
import type { AgentComposition, ErrorRecord, SessionId } from '@keel/session'
import { errorOutput, type ToolOutput } from '@keel/tools'
import type { ApprovalPolicyService } from '@keel/user-approval'
import { parentAnswerer } from './bubble.js'
import { childComposition, childTools } from './compose.js'
import { type AgentDefinition, SubagentError } from './definition.js'
import type { SubagentOutcome } from './events.js'
import { childPolicy, requestedPolicy } from './policy.js'
import { stepsOf, usageTotalsProjection } from './usage.js'

/** One `task` call, as the tool hands it over. */
export interface ChildRun {
  readonly definition: AgentDefinition
  readonly description: string
  readonly prompt: string
  /** The child's depth (1 for a child of a top-level session). */
  readonly depth: number
  /** Whether the child may delegate in turn (it then gets the `task` tool). */
  readonly mayDelegate: boolean
  readonly callId: string
  readonly signal: AbortSignal
  progress(message: string): void
}

/** What the parent lends a delegation. */
export interface Parent {
  readonly ctx: PluginContext<unknown>
  readonly sessions: ChildSessions
  readonly composition: AgentComposition
  /** The parent's `approval.policy`, when an approval plugin runs in it. */
  readonly policy: ApprovalPolicyService | undefined
}

/** The system prompt of a child: the definition's body and where it works. */
export function childSystemPrompt(definition: AgentDefinition, cwd: string): string {
  const body = definition.prompt === '' ? `You are the ${definition.name} subagent.` : definition.prompt
  return `${body}\n\nWorking directory: ${cwd}`
}

/** Live progress of the child, shown through the parent's tool progress. */
function progressObserver(agent: string, progress: (message: string) => void): AgentObserver {
  return {
    onToolCallStarted: (info) => progress(`${agent}: ${info.call.name}`),
    onRetry: (notice) =>
      progress(`${agent}: model call failed (${notice.error.code}); retry ${notice.attempt}`),
  }
}

/**
 * Runs one child to the end of its turn and returns the parent's tool output. Order, so
 * that every crash leaves something readable: the child session is created (its header
 * names the parent's session, turn, call and the depth), `subagent/spawned` is appended to
 * the parent, the agent is built from the recorded composition, its policy is narrowed to
 * the parent's (and kept there while it runs), `subagent/descriptor` is appended to the
 * child, the turn runs (the parent's abort aborts it), the child is closed, and
 * `subagent/settled` records its outcome and usage in the parent. Throws
 * {@link SubagentError} (a coded tool result) when the child did not complete.
 */
export async function runChild(parent: Parent, run: ChildRun): Promise<ToolOutput> {
  const { ctx, sessions } = parent
  const open = ctx.session.openTurn
  if (!open) throw new SubagentError('SUBAGENT_FAILED', 'task runs only inside a turn of the agent')
  const { definition } = run
  const tools = childTools(
    definition,
    ctx.tools().map((t) => t.name),
    run.mayDelegate,
  )
  const model = definition.model ?? parent.composition.model ?? sessions.model
  const composition = childComposition(parent.composition, {
    plugin: ctx.name,
    mayDelegate: run.mayDelegate,
    model,
    tools,
  })
  const handle = await sessions.create({
    cwd: ctx.cwd,
    title: `${definition.name}: ${run.description}`.slice(0, 120),
    agentPreset: composition.preset,
    agentComposition: composition,
    delegatedBy: {
      session: ctx.session.id,
      turn: open.turn,
      callId: run.callId,
      agent: definition.name,
      depth: run.depth,
    },
  })
  const child = handle.session.id
  ctx.session.append('subagent/spawned', {
    turn: open.turn,
    callId: run.callId,
    child,
    agent: definition.name,
    description: run.description,
  })
  // The parent's log names the child before the child runs: a crash while it works keeps the link.
  await ctx.flush()
  let agent: Agent
  try {
    agent = await sessions.agent(handle, {
      systemPrompt: childSystemPrompt(definition, ctx.cwd),
      answerers: [
        parentAnswerer(ctx, { agent: definition.name, child, turn: open.turn, callId: run.callId }),
      ],
      observers: [progressObserver(definition.name, run.progress)],
      ...(definition.maxTurns === undefined ? {} : { maxSteps: definition.maxTurns }),
      logger: (entry) =>
        ctx.display('subagent-log', `${definition.name} (${child}): ${entry.code}: ${entry.message}`),
    })
  } catch (error) {
    await handle.close().catch((closing: unknown) => report(ctx, child, closing))
    const record = errorRecordOf(error, 'SUBAGENT_FAILED')
    recordSettled(ctx, { callId: run.callId, child, outcome: 'not-started', session: handle, error: record })
    throw new SubagentError(
      'SUBAGENT_FAILED',
      `subagent ${definition.name} could not start: ${record.code}: ${record.message}`,
      { child, agent: definition.name },
      { cause: error },
    )
  }
  let result: TurnResult | undefined
  let failure: unknown
  let stopNarrowing = () => {}
  try {
    stopNarrowing = narrowPolicy(parent.policy, agent, definition, (error) => report(ctx, child, error))
    const policy = agent.services.get('approval.policy')?.current()
    agent.session.append('subagent/descriptor', {
      agent: definition.name,
      source: definition.source,
      ...(definition.file === undefined ? {} : { file: definition.file }),
      definitionDigest: definition.digest,
      description: run.description,
      ...(model === undefined ? {} : { model }),
      tools: agent.tools.map((t) => t.name),
      ...(policy === undefined ? {} : { policy }),
    })
    result = await agent.send(run.prompt, { signal: run.signal, source: `subagent/${ctx.session.id}` })
  } catch (error) {
    failure = error
  } finally {
    stopNarrowing()
    await agent.close().catch((error: unknown) => {
      failure ??= error
    })
  }
  const outcome: SubagentOutcome = result?.reason ?? 'error'
  const error =
    result?.error ?? (failure === undefined ? undefined : errorRecordOf(failure, 'SUBAGENT_FAILED'))
  const { usage, steps } = recordSettled(ctx, {
    callId: run.callId,
    child,
    outcome,
    session: handle,
    ...(error === undefined ? {} : { error }),
  })
  const trailer = `[subagent ${definition.name} · session ${child} · ${steps} step${steps === 1 ? '' : 's'} · ${usage.totalTokens} tokens]`
  if (result?.reason === 'completed' && failure === undefined) {
    return {
      content: [{ type: 'text', text: `${result.text || '(the subagent gave no answer)'}\n\n${trailer}` }],
    }
  }
  if (outcome === 'aborted' && run.signal.aborted) {
    return errorOutput(
      'TOOL_ABORTED',
      `task was cancelled (the turn was aborted); subagent ${definition.name} stopped, and its log is session ${child}.\n${trailer}`,
    )
  }
  const why = error ? `${error.code}: ${error.message}` : outcome
  const partial = result?.text ? `\nIts last message:\n${result.text}` : ''
  throw new SubagentError(
    'SUBAGENT_FAILED',
    `subagent ${definition.name} did not complete (${outcome}${error ? `, ${why}` : ''}); its log is session ${child}.${partial}\n${trailer}`,
    { child, agent: definition.name, outcome },
  )
}

/**
 * Keeps a child's policy within the parent's: at once, and again after every switch in the
 * parent (a `/sandbox read_only` in the parent reaches a running child). Each change is a
 * logged switch in the child's log. Returns the function that stops following the parent.
 */
function narrowPolicy(
  parentPolicy: ApprovalPolicyService | undefined,
  agent: Agent,
  definition: AgentDefinition,
  report: (error: unknown) => void,
): () => void {
  const own = agent.services.get('approval.policy')
  if (!parentPolicy || !own) return () => {}
  const requested = requestedPolicy(definition)
  const apply = (ceiling: ReturnType<ApprovalPolicyService['current']>, wanted: typeof requested) => {
    const target = childPolicy(ceiling, wanted)
    const now = own.current()
    if (now.sandboxMode !== target.sandboxMode) own.setSandboxMode(target.sandboxMode)
    if (now.approvalPolicy !== target.approvalPolicy) own.setApprovalPolicy(target.approvalPolicy)
  }
  apply(parentPolicy.current(), requested)
  return parentPolicy.subscribe((now) => {
    try {
      apply(now, own.current())
    } catch (error) {
      report(error)
    }
  })
}

/** Shows a failure around a child that has no caller to reject. */
function report(ctx: PluginContext<unknown>, child: string, error: unknown): void {
  ctx.display('subagent-log', `subagent session ${child}: ${errorMessage(error)}`)
}

/** Appends `subagent/settled` to the parent (when its log still takes events) and returns what it recorded. */
function recordSettled(
  ctx: PluginContext<unknown>,
  entry: {
    callId: string
    child: SessionId
    outcome: SubagentOutcome
    session: StoreHandle
    error?: ErrorRecord
  },
): { usage: ReturnType<typeof usageTotalsProjection.init>; steps: number } {
  const usage = entry.session.session.project(usageTotalsProjection)
  const steps = stepsOf(entry.session.session)
  try {
    ctx.session.append('subagent/settled', {
      callId: entry.callId,
      child: entry.child,
      outcome: entry.outcome,
      usage,
      steps,
      ...(entry.error === undefined ? {} : { error: entry.error }),
    })
  } catch (error) {
    // The parent's log no longer takes events (it closed after an abort gave up on this
    // call): resuming it settles the child as interrupted.
    if (!isKeelError(error)) throw error
    report(ctx, entry.child, error)
  }
  return { usage, steps }
}
