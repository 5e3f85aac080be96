import {
  type ApprovalAnswerer,
  askAbout,
  type BeforeToolDecision,
  type PluginDefinition,
  PluginHost,
  systemClock,
  type ToolCallInfo,
  usePlugin,
} from '@keel/agent'
import { offlineLlm } from '@keel/agent/testing'
import type { ToolCallId } from '@keel/llm'
import type { Session } from '@keel/session'
import type { Tool } from '@keel/tools'

/**
 * The real plugin host around the plugins under test, without a model: drives `beforeTool`
 * directly and answers an `ask` through the agent's real answerer chain (`askAbout`), as
 * the agent's tool dispatch does.
 */
export class PluginRig {
  host: PluginHost | undefined
  /** Failures the host reported with no caller to reject (none expected). */
  readonly reports: { readonly code: string; readonly message: string }[] = []
  readonly #asked = new Map<string, number>()
  #answerers: readonly ApprovalAnswerer[] = []
  #calls = 0

  constructor(
    readonly session: Session,
    readonly cwd: string,
  ) {}

  async setup<Config>(
    plugin: PluginDefinition<Config>,
    config?: unknown,
    answerers: readonly ApprovalAnswerer[] = [],
  ): Promise<this> {
    this.host = await PluginHost.start([usePlugin(plugin, config) as never], {
      session: this.session,
      cwd: this.cwd,
      clock: systemClock,
      llm: offlineLlm(),
      report: (entry) => {
        this.reports.push(entry)
      },
      enqueue: () => {},
      inject: () => {},
      display: () => {},
      tools: () => [],
    })
    this.#answerers = [...answerers, ...this.host.answerers]
    return this
  }

  #info(tool: Tool<unknown>, input: unknown, signal?: AbortSignal): ToolCallInfo {
    const open = this.session.openTurn
    const id = `call_${++this.#calls}` as ToolCallId
    return {
      turn: open?.turn ?? 0,
      step: 1,
      call: { type: 'tool-call', id, name: tool.name, arguments: JSON.stringify(input) },
      tool,
      input,
      facts: tool.facts?.(input, this.cwd) ?? {},
      ...(signal ? { signal } : {}),
    }
  }

  /** The plugins' vote on one call of `tool` in the open turn (step 1), before any answerer. */
  async vote(tool: Tool<unknown>, input: unknown): Promise<BeforeToolDecision> {
    return (await this.host!.beforeTool(this.#info(tool, input))).decision
  }

  /** What happens to one call: the vote, and for an `ask` the answerer chain's verdict. */
  async beforeTool(tool: Tool<unknown>, input: unknown, signal?: AbortSignal): Promise<BeforeToolDecision> {
    const info = this.#info(tool, input, signal)
    const verdict = await this.host!.beforeTool(info)
    if (verdict.decision.action !== 'ask') return verdict.decision
    return askAbout(
      { session: this.session, answerers: this.#answerers, asked: this.#asked },
      verdict.decision,
      verdict.plugin,
      verdict.info,
      signal ?? new AbortController().signal,
    )
  }

  /** Opens a turn so approval events have one to live in. */
  openTurn(): number {
    const turn = this.session.lastTurn + 1
    this.session.append('turn/start', { turn })
    return turn
  }

  readonly dispose = async (): Promise<void> => {
    await this.host?.close()
  }
}
