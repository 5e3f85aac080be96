import { canonicalJson } from '@keel/base'
import type { HookEngine } from './engine.js'
import { type HookToolCall, type PreToolUseResult, preToolUse } from './points.js'

/**
 * The hooks of one agent: its engine and the bookkeeping the interception points share
 * (one PreToolUse run per tool call and input, the Stop loop guard, a pending halt).
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

  /**
   * `applied` receives each PreToolUse result exactly once, when its run ends (the plugin
   * shows notices, adds context and records a halt there), whichever asker ran the hooks.
   */
  constructor(
    readonly engine: HookEngine,
    readonly toolNames: Readonly<Record<string, string>>,
    readonly applied: (result: PreToolUseResult) => void = () => {},
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

  /**
   * PreToolUse for one call with one input, run once however many times it is asked (the
   * `beforeTool` vote, the approval answerer), whichever asks first. A call another plugin
   * rewrote is a new input: its hooks run again, so their verdict is about what runs.
   */
  preToolUse(call: Omit<HookToolCall, 'toolNames'>): Promise<PreToolUseResult> {
    this.enterTurn(call.turn)
    const key = keyOf(call.callId, call.input)
    let pending = this.#preToolUse.get(key)
    if (!pending) {
      pending = preToolUse(this.engine, { ...call, toolNames: this.toolNames }).then((result) => {
        this.applied(result)
        return result
      })
      this.#preToolUse.set(key, pending)
    }
    return pending
  }

  /**
   * The hooks rewrote a call (`updatedInput`): their verdict is about the input they wrote,
   * so when the agent judges the rewritten call again the same result answers without
   * running the hooks a second time (Claude Code runs them once per call). A rewrite by
   * another plugin has no such entry: the hooks run again on it.
   */
  adopt(turn: number, callId: string, input: unknown, result: PreToolUseResult): void {
    this.enterTurn(turn)
    const { updatedInput: _applied, ...verdict } = result
    this.#preToolUse.set(keyOf(callId, input), Promise.resolve(verdict))
  }
}

function keyOf(callId: string, input: unknown): string {
  return `${callId}\u0000${canonicalJson(input)}`
}
