import { type PluginDefinition, PluginHost, systemClock, type ToolCallInfo, usePlugin } from '@keel/agent'
import type { ToolCallId } from '@keel/llm'
import type { Session } from '@keel/session'
import type { Tool } from '@keel/tools'

/** The real plugin host around the plugins under test, without a model: for driving `beforeTool` directly. */
export class PluginRig {
  host: PluginHost | undefined
  #calls = 0

  constructor(
    readonly session: Session,
    readonly cwd: string,
  ) {}

  async setup<Config>(plugin: PluginDefinition<Config>, config?: unknown): Promise<this> {
    this.host = await PluginHost.start([usePlugin(plugin, config) as never], {
      session: this.session,
      cwd: this.cwd,
      clock: systemClock,
      enqueue: () => {},
      inject: () => {},
      display: () => {},
    })
    return this
  }

  /** Asks the plugins about one call of `tool` in the open turn (step 1). */
  async beforeTool(tool: Tool<unknown>, input: unknown, signal?: AbortSignal) {
    const open = this.session.openTurn
    const id = `call_${++this.#calls}` as ToolCallId
    const info: ToolCallInfo = {
      turn: open?.turn ?? 0,
      step: 1,
      call: { type: 'tool-call', id, name: tool.name, arguments: JSON.stringify(input) },
      tool,
      input,
      facts: tool.facts?.(input, this.cwd) ?? {},
      ...(signal ? { signal } : {}),
    }
    return (await this.host!.beforeTool(info)).decision
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
