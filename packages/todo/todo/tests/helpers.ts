import type { Clock, Interceptors, PluginContext, PluginDefinition } from '@keel/agent'
import { ManualClock, type SoloContext, soloContext } from '@keel/agent/testing'
import type { DeveloperMessage, ToolCallId, UserMessage } from '@keel/llm'
import type { Session } from '@keel/session'
import { createToolContext, runToolCall, type Tool, type ToolOutput } from '@keel/tools'

/** One tool call the scripted "model" makes in a step. */
export interface ScriptedCall {
  name: string
  args: unknown
}

/**
 * A minimal stand-in for the agent around one plugin: a real Session, the plugin's real
 * setup, the real tools runtime, and the agent's step order (beforeStep, injected
 * developer messages, step/start, assistant message, tool calls and results, step/end).
 * The integration tests run the plugins inside the real agent.
 */
export class PluginDriver<Config> {
  readonly tools = new Map<string, Tool<unknown>>()
  readonly interceptors: Interceptors[] = []
  readonly enqueued: Array<{ message: UserMessage; source?: string }> = []
  readonly injected: Array<{ message: DeveloperMessage; source?: string }> = []
  readonly displayed: Array<{ kind: string; text: string }> = []
  readonly outputs: ToolOutput[] = []
  dispose: (() => void | Promise<void>) | undefined
  /** What the plugin's setup contributed (commands, services). */
  solo: SoloContext | undefined
  #calls = 0

  constructor(
    readonly session: Session,
    readonly clock: Clock = new ManualClock(),
  ) {}

  async setup(plugin: PluginDefinition<Config>, rawConfig: unknown = {}): Promise<this> {
    const config = plugin.config ? plugin.config.parse(rawConfig) : (rawConfig as Config)
    const solo = soloContext(plugin as PluginDefinition<unknown>, config, {
      session: this.session,
      clock: this.clock,
      enqueue: (message, source) => this.enqueued.push({ message, ...(source ? { source } : {}) }),
      inject: (message, source) => this.injected.push({ message, ...(source ? { source } : {}) }),
      display: ({ kind, text }) => this.displayed.push({ kind, text }),
    })
    this.solo = solo
    const dispose = await plugin.setup?.(solo.context as PluginContext<Config>)
    solo.done()
    for (const tool of [...(plugin.tools ?? []), ...solo.tools]) this.tools.set(tool.name, tool)
    this.interceptors.push(...solo.interceptors.map((i) => i.interceptors))
    if (typeof dispose === 'function') this.dispose = dispose
    return this
  }

  /** Opens a turn with a user message. */
  startTurn(text = 'go', source?: string): number {
    const turn = this.session.lastTurn + 1
    this.session.append('turn/start', { turn })
    const message: UserMessage = { role: 'user', content: [{ type: 'text', text }] }
    this.session.append('user/message', source ? { message, source } : { message })
    return turn
  }

  endTurn(): void {
    const open = this.session.openTurn
    if (!open) throw new Error('no open turn')
    this.session.append('turn/end', { turn: open.turn, reason: 'completed' })
  }

  /** Runs one step of the open turn in the agent's order; returns the tool outputs. */
  async step(calls: ScriptedCall[] = []): Promise<ToolOutput[]> {
    const open = this.session.openTurn
    if (!open) throw new Error('no open turn')
    const lastStep = [...this.session.events]
      .reverse()
      .find((e) => e.type === 'step/start' || e.type === 'turn/start')
    const step = lastStep?.type === 'step/start' ? lastStep.data.step + 1 : 1
    const turn = open.turn
    for (const interceptors of this.interceptors) {
      const decision = await interceptors.beforeStep?.({ turn, step })
      if (decision?.action === 'reject') throw new Error(`step rejected: ${decision.reason}`)
    }
    while (this.injected.length > 0) {
      const { message, source } = this.injected.shift()!
      this.session.append('developer/message', source ? { message, source } : { message })
    }
    this.session.append('step/start', { turn, step })
    const blocks = calls.map((c) => ({
      type: 'tool-call' as const,
      id: `call_${++this.#calls}` as ToolCallId,
      name: c.name,
      arguments: JSON.stringify(c.args),
    }))
    this.session.append('assistant/message', {
      turn,
      step,
      message: { role: 'assistant', content: blocks.length ? blocks : [{ type: 'text', text: 'working' }] },
      stream: { provider: 'test', model: 'm', startedAt: 1, endedAt: 2, chunks: 1, finishReason: 'stop' },
    })
    const outputs: ToolOutput[] = []
    for (const block of blocks) {
      this.session.append('tool/call', {
        turn,
        step,
        callId: block.id,
        name: block.name,
        arguments: block.arguments,
      })
      const tool = this.tools.get(block.name)
      if (!tool) throw new Error(`no tool ${block.name}`)
      const context = createToolContext({ cwd: process.cwd(), callId: block.id, session: this.session })
      const { output } = await runToolCall(tool, block.arguments, context)
      outputs.push(output)
      this.outputs.push(output)
      this.session.append('tool/result', {
        turn,
        step,
        message: {
          role: 'tool',
          toolCallId: block.id,
          toolName: block.name,
          content: output.content,
          ...(output.isError ? { isError: true as const } : {}),
        },
        ...(output.errorCode ? { errorCode: output.errorCode } : {}),
      })
    }
    this.session.append('step/end', { turn, step })
    return outputs
  }
}

/** The text of a tool output. */
export function outputText(output: ToolOutput): string {
  return output.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
}
