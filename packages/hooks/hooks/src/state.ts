import type { Session } from '@keel/session'
import type { HookEngine } from './engine.js'
import { type HookToolCall, type PreToolUseResult, preToolUse } from './points.js'

/**
 * The hooks of one agent: its engine and the per-session bookkeeping the interception points
 * share (one PreToolUse run per tool call, the Stop loop guard, a pending halt).
 */
export class HookSession {
  readonly #preToolUse = new Map<string, Promise<PreToolUseResult>>()
  #turn = 0
  /** `continue: false` was printed: the next step is refused with this reason. */
  halt: string | undefined
  /** Stop hooks that kept this turn going in a row without the model using a tool (the loop cap counts these). */
  stopBlocks = 0
  /** A Stop hook already kept this turn going: `stop_hook_active` for every later Stop of the turn. */
  stopContinued = false
  /** The step of the last Stop continuation (a later stop after tool use resets the count). */
  lastStopStep = -1

  constructor(
    readonly engine: HookEngine,
    readonly toolNames: Readonly<Record<string, string>>,
  ) {}

  /** Starts bookkeeping for `turn` (forgets the previous turn's calls and Stop count). */
  enterTurn(turn: number): void {
    if (turn === this.#turn) return
    this.#turn = turn
    this.#preToolUse.clear()
    this.stopBlocks = 0
    this.stopContinued = false
    this.lastStopStep = -1
  }

  /** PreToolUse for one call, run once however many times it is asked (interceptor and answerer). */
  preToolUse(call: Omit<HookToolCall, 'toolNames'>): Promise<PreToolUseResult> {
    this.enterTurn(call.turn)
    let pending = this.#preToolUse.get(call.callId)
    if (!pending) {
      pending = preToolUse(this.engine, { ...call, toolNames: this.toolNames })
      this.#preToolUse.set(call.callId, pending)
    }
    return pending
  }
}

const sessions = new WeakMap<Session, HookSession>()

/** Registers the hooks of the agent running `session` (done by the plugin's setup). */
export function attachHookSession(session: Session, hooks: HookSession): () => void {
  sessions.set(session, hooks)
  return () => {
    if (sessions.get(session) === hooks) sessions.delete(session)
  }
}

/** The hooks attached to `session`, if the hooks plugin runs in its agent. */
export function hookSessionOf(session: Session): HookSession | undefined {
  return sessions.get(session)
}
