import type { Message } from '@keel/llm'
import { SessionError, type SessionErrorCode } from './errors.js'
import type { SessionEventMap } from './events.js'
import type { SessionEvent, SurfaceOp } from './types.js'

/** A committed `tool/call` of the open turn that has no `tool/result` yet. */
export interface UnansweredCall {
  readonly turn: number
  readonly step: number
  readonly callId: string
  readonly name: string
}

/** The open turn and step, as seen by the lifecycle rules. */
export interface OpenTurn {
  readonly turn: number
  /** The open step, or null between steps. */
  readonly step: number | null
}

/** One tool call of the open turn: its step, tool name and whether its result was committed. */
export interface ToolCallState {
  readonly step: number
  readonly name: string
  answered: boolean
}

/** The lifecycle state folded over a log: open turn and step, and the open turn's tool calls. */
export interface LifecycleState {
  openTurn: number | null
  /** The highest turn number used so far (0 before the first turn). */
  lastTurn: number
  openStep: number | null
  /** The highest step number of the open turn (0 before its first step). */
  lastStep: number
  /** Tool calls of the open turn, by call id, in call order. */
  toolCalls: Map<string, ToolCallState>
}

/**
 * The change one event makes to a {@link LifecycleState}, computed by {@link planLifecycle}
 * before anything is committed and applied by {@link applyLifecycle} once nothing can fail.
 */
export type LifecycleChange =
  | { readonly kind: 'turn-start'; readonly turn: number }
  | { readonly kind: 'turn-end' }
  | { readonly kind: 'step-start'; readonly step: number }
  | { readonly kind: 'step-end' }
  | { readonly kind: 'call'; readonly callId: string; readonly step: number; readonly name: string }
  | { readonly kind: 'result'; readonly callId: string }

/** Core event types that must be inside an open step. */
const STEP_SCOPED: ReadonlySet<string> = new Set([
  'assistant/message',
  'assistant/attempt',
  'tool/call',
  'tool/result',
])

export function initialLifecycle(): LifecycleState {
  return { openTurn: null, lastTurn: 0, openStep: null, lastStep: 0, toolCalls: new Map() }
}

/** The error of a broken lifecycle rule, naming the event type and seq. */
export function lifecycleError(
  code: SessionErrorCode,
  type: string,
  seq: number,
  reason: string,
): SessionError {
  return new SessionError(code, `cannot append '${type}' at seq ${seq}: ${reason}`, { type, seq })
}

/**
 * Checks one event of a registered type against the lifecycle rules (turns, steps, tool
 * call/result pairing) and returns the change it makes, or null when it changes nothing.
 * Mutates nothing. With `validate` false (events already validated, such as fork copies)
 * it only computes the change. `isRewrite` marks a `tool/result` that rewrites an answered
 * result (see {@link isResultRewrite}): no step or pairing rule applies to it.
 */
export function planLifecycle(
  state: LifecycleState,
  type: string,
  seq: number,
  data: Record<string, unknown>,
  validate: boolean,
  isRewrite: boolean,
): LifecycleChange | null {
  switch (type) {
    case 'turn/start': {
      const turn = data.turn as number
      if (validate && state.openTurn !== null) {
        throw lifecycleError(
          'TURN_ALREADY_OPEN',
          type,
          seq,
          `turn ${state.openTurn} is still open; end it first`,
        )
      }
      if (validate && turn <= state.lastTurn) {
        throw lifecycleError(
          'TURN_NUMBER_INVALID',
          type,
          seq,
          `turn ${turn} is not after the last turn ${state.lastTurn}`,
        )
      }
      return { kind: 'turn-start', turn }
    }
    case 'turn/end':
      if (validate) {
        requireTurn(state, type, seq, data.turn)
        if (state.openStep !== null) {
          throw lifecycleError(
            'STEP_STILL_OPEN',
            type,
            seq,
            `step ${state.openStep} is still open; append its step/end first`,
          )
        }
      }
      return { kind: 'turn-end' }
    case 'step/start': {
      const step = data.step as number
      if (validate) {
        requireTurn(state, type, seq, data.turn)
        if (state.openStep !== null) {
          throw lifecycleError('STEP_ALREADY_OPEN', type, seq, `step ${state.openStep} is still open`)
        }
        if (step <= state.lastStep) {
          throw lifecycleError('OUTSIDE_STEP', type, seq, `step ${step} is not after step ${state.lastStep}`)
        }
      }
      return { kind: 'step-start', step }
    }
    case 'step/end':
      if (validate) requireStep(state, type, seq, data)
      return { kind: 'step-end' }
    case 'tool/call': {
      if (validate) requireStep(state, type, seq, data)
      const callId = data.callId as string
      if (validate && state.toolCalls.has(callId)) {
        throw lifecycleError(
          'DUPLICATE_TOOL_CALL',
          type,
          seq,
          `call id '${callId}' was already used in turn ${state.openTurn}`,
        )
      }
      return { kind: 'call', callId, step: data.step as number, name: data.name as string }
    }
    case 'tool/result': {
      if (isRewrite) return null
      if (validate) requireStep(state, type, seq, data)
      const callId = (data.message as { toolCallId: string }).toolCallId
      const call = state.toolCalls.get(callId)
      if (validate && call === undefined) {
        throw lifecycleError(
          'TOOL_RESULT_WITHOUT_CALL',
          type,
          seq,
          `no tool/call with id '${callId}' in turn ${state.openTurn}; append the tool/call first`,
        )
      }
      if (validate && call?.answered) {
        throw lifecycleError('DUPLICATE_TOOL_RESULT', type, seq, `call '${callId}' already has a result`)
      }
      return { kind: 'result', callId }
    }
    default:
      if (validate && STEP_SCOPED.has(type)) requireStep(state, type, seq, data)
      return null
  }
}

/** Applies a change computed by {@link planLifecycle}. Never throws. */
export function applyLifecycle(state: LifecycleState, change: LifecycleChange): void {
  switch (change.kind) {
    case 'turn-start':
      state.openTurn = change.turn
      state.lastTurn = change.turn
      state.openStep = null
      state.lastStep = 0
      state.toolCalls = new Map()
      return
    case 'turn-end':
      state.openTurn = null
      state.toolCalls = new Map()
      return
    case 'step-start':
      state.openStep = change.step
      state.lastStep = change.step
      return
    case 'step-end':
      state.openStep = null
      return
    case 'call':
      state.toolCalls.set(change.callId, { step: change.step, name: change.name, answered: false })
      return
    case 'result': {
      const call = state.toolCalls.get(change.callId)
      if (call) call.answered = true
      return
    }
  }
}

/**
 * Whether `event` is a `tool/result` that replaces exactly one earlier `tool/result` node
 * of the same call (same call id, turn and step): a rewrite of an answered call, such as
 * compaction swapping an old output for a placeholder. The call was answered when the
 * original was committed, so the step and pairing rules do not apply again; the replace
 * itself is still checked like any other. `original` is the interpreted event at the
 * replace's start seq (undefined when there is none or it is opaque).
 */
export function isResultRewrite(
  surfaceOp: SurfaceOp | undefined,
  data: unknown,
  original: (seq: number) => SessionEvent | undefined,
): boolean {
  if (typeof surfaceOp !== 'object' || surfaceOp.startSeq !== surfaceOp.endSeq) return false
  const replaced = original(surfaceOp.startSeq)
  if (replaced?.type !== 'tool/result') return false
  const result = data as SessionEventMap['tool/result']
  return (
    result.message.toolCallId === replaced.data.message.toolCallId &&
    result.turn === replaced.data.turn &&
    result.step === replaced.data.step
  )
}

/**
 * Rules for new appends only (logs written before them still load): a step ends only
 * after every tool call it committed has its result, and a `system/message` never comes
 * after other messages — it opens a blank surface, or replaces the system message that
 * opens it (the logged way to change the system prompt). `head` is the first surface node.
 */
export function checkLiveLifecycle(
  state: LifecycleState,
  type: string,
  seq: number,
  data: Record<string, unknown>,
  surfaceOp: SurfaceOp | undefined,
  head: { readonly seq: number; readonly message: Message } | null,
): void {
  if (type === 'step/end') {
    const open: string[] = []
    for (const [callId, call] of state.toolCalls) {
      if (!call.answered && call.step === data.step) open.push(callId)
    }
    if (open.length > 0) {
      throw lifecycleError(
        'TOOL_CALL_UNANSWERED',
        type,
        seq,
        `tool call(s) ${open.map((id) => `'${id}'`).join(', ')} of step ${data.step} have no tool/result; append one for each first`,
      )
    }
  } else if (type === 'system/message' && head !== null) {
    const replacesHead =
      typeof surfaceOp === 'object' &&
      surfaceOp !== null &&
      surfaceOp.startSeq === head.seq &&
      head.message.role === 'system'
    if (!replacesHead) {
      throw lifecycleError(
        'SYSTEM_MESSAGE_NOT_FIRST',
        type,
        seq,
        head.message.role === 'system'
          ? 'the surface already opens with a system message; replace it (surfaceOp replace of its seq) instead of appending another'
          : 'the session already has messages and no system message; a system message may only open a blank surface',
      )
    }
  }
}

/** The committed tool calls of the open turn that have no result yet, in call order. */
export function unansweredCalls(state: LifecycleState): UnansweredCall[] {
  const turn = state.openTurn
  if (turn === null) return []
  const out: UnansweredCall[] = []
  for (const [callId, call] of state.toolCalls) {
    if (!call.answered) out.push({ turn, step: call.step, callId, name: call.name })
  }
  return out
}

function requireTurn(state: LifecycleState, type: string, seq: number, turn: unknown): void {
  if (state.openTurn === null) throw lifecycleError('OUTSIDE_TURN', type, seq, 'no turn is open')
  if (turn !== state.openTurn) {
    throw lifecycleError(
      'OUTSIDE_TURN',
      type,
      seq,
      `it names turn ${turn} but turn ${state.openTurn} is open`,
    )
  }
}

function requireStep(state: LifecycleState, type: string, seq: number, data: Record<string, unknown>): void {
  requireTurn(state, type, seq, data.turn)
  if (state.openStep === null) throw lifecycleError('OUTSIDE_STEP', type, seq, 'no step is open')
  if (data.step !== state.openStep) {
    throw lifecycleError(
      'OUTSIDE_STEP',
      type,
      seq,
      `it names step ${data.step} but step ${state.openStep} is open`,
    )
  }
}
