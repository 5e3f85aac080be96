import { errorRecordOf } from '@keel/base'
import type { DeveloperMessage, UserMessage } from '@keel/llm'
import { closeInterruptedTurn, type Session } from '@keel/session'
import { noServices, type ServiceView, type Tool } from '@keel/tools'
import { type CommandSummary, runDurableCommand } from './commands.js'
import { type DirectToolOptions, type DirectToolResult, runDirectTool } from './direct-tool.js'
import { AgentError } from './errors.js'
import './events.js'
import { PluginHost } from './host.js'
import { type ModelRoute, modelFacilities } from './model-route.js'
import {
  type AgentLogger,
  type AgentOptions,
  isHandle,
  positiveInteger,
  type ResolvedOptions,
  resolveOptions,
  type SendOptions,
  type StoreHandle,
  type TurnResult,
  toDeveloperMessage,
  toolAllowed,
  toUserMessage,
} from './options.js'
import { createEmit, type Emit, type Runtime } from './runtime.js'
import { replaceSystemPrompt, startSystemPrompt } from './system-prompt.js'
import { ToolBoard } from './tool-sets.js'
import { type InboxItem, inboxItem, runTurn } from './turn.js'
import { TurnQueue } from './turn-queue.js'

/**
 * Creates an agent over a session: validates the options, appends the system prompt to a
 * blank session, sets the plugins up (config validated, tools collected), and checks every
 * tool (unique valid names, schemas convertible to JSON Schema). A bare session left with
 * an open turn is closed as the stores do (unanswered calls answered `TOOL_INTERRUPTED`,
 * `turn/end` `interrupted`). Then the `sessionStart` interceptors run. Throws
 * {@link AgentError} or the tools runtime's `ToolRegistryError`; on failure, plugins already
 * set up are disposed, the agent itself has appended nothing, and the store handle stays
 * open (it is the caller's until an agent owns it).
 */
export async function createAgent(options: AgentOptions): Promise<Agent> {
  return Agent.start(options)
}

/**
 * One agent: an inbox of user messages run as turns, one at a time (see `turn.ts`), each a
 * loop of steps (one model call, then the tools it asked for). Everything that happens is
 * appended to the session log; live UIs follow along through observers.
 */
export class Agent {
  readonly session: Session
  readonly #handle: StoreHandle | undefined
  readonly #resolved: ResolvedOptions
  readonly #log: AgentLogger
  readonly #emit: Emit
  #runtime!: Runtime
  #host!: PluginHost
  readonly #board: ToolBoard

  readonly #queue = new TurnQueue((item) => this.#runQueued(item))
  readonly #injections: Array<{ message: DeveloperMessage; source?: string }> = []
  #controller: AbortController | null = null
  /** The running turn's own `max_tokens` (`SendOptions.maxTokens`), for `ctx.model()`. */
  #turnMaxTokens: number | undefined
  #route!: () => ModelRoute
  #closed = false
  #closing: Promise<void> | null = null
  /** Set when a turn failed because the log refused a write (`sessionEnd` reason `error`). */
  #failed = false
  #unsubscribe: () => void = () => {}

  private constructor(options: AgentOptions) {
    this.#handle = isHandle(options.session) ? options.session : undefined
    this.session = isHandle(options.session) ? options.session.session : options.session
    this.#resolved = resolveOptions(options, this.session, this.#handle?.directory)
    this.#log = options.logger ?? (() => {})
    this.#emit = createEmit(options.observers ?? [], this.#log)
    this.#board = new ToolBoard(
      (code, message) => this.#emit('onNotice', { code, message }),
      toolAllowed(options.toolFilter),
    )
  }

  /** @internal Use {@link createAgent}. */
  static async start(options: AgentOptions): Promise<Agent> {
    const agent = new Agent(options)
    const session = agent.session
    if ((options.observers ?? []).some((o) => o.onEvent)) {
      agent.#unsubscribe = session.subscribe((event) => agent.#emit('onEvent', event))
    }
    const resolved = agent.#resolved
    const { route, ...model } = modelFacilities(options.llm, resolved, {
      services: () => agent.services,
      turnMaxTokens: () => agent.#turnMaxTokens,
    })
    agent.#route = model.model
    try {
      agent.#host = await PluginHost.start(options.plugins ?? [], {
        session,
        cwd: resolved.cwd,
        clock: resolved.clock,
        llm: options.llm,
        ...model,
        toolSpecs: () => agent.#runtime?.specs ?? [],
        enqueue: (message, opts) => agent.#enqueueFromPlugin(message, opts?.source),
        inject: (message, opts) => agent.inject(message, opts),
        display: (notice) => agent.#emit('onDisplay', notice),
        flush: () => agent.flush(),
        tools: () => agent.#board.registry.list(),
        toolSet: (plugin) => agent.#board.set(plugin),
        answerers: () => agent.#runtime?.answerers ?? [],
        sessions: options.sessions,
        report: agent.#log,
      })
    } catch (error) {
      agent.#abandon(error)
      throw error
    }
    const board = agent.#board
    try {
      board.start([...agent.#host.tools, ...(options.tools ?? [])])
    } catch (error) {
      agent.#abandon(error)
      await agent.#host.close().catch(() => {})
      throw error
    }
    agent.#runtime = {
      session,
      llm: options.llm,
      host: agent.#host,
      get registry() {
        return board.registry
      },
      get specs() {
        return board.specs
      },
      board,
      options: agent.#resolved,
      answerers: [...agent.#resolved.answerers, ...agent.#host.answerers],
      services: agent.#host.services,
      emit: agent.#emit,
      log: agent.#log,
      flush: () => agent.flush(),
      drainInjections: () => agent.#drainInjections(),
      route,
      requests: {},
    }
    const resumed = session.events.length > 0
    // a bare session left mid-turn is closed the way a store closes one on open
    closeInterruptedTurn(session)
    const kept = startSystemPrompt(session, options.systemPrompt, resumed)
    if (kept) agent.#emit('onNotice', kept)
    const added = await agent.#host.sessionStart({ source: resumed ? 'resume' : 'startup' })
    for (const { plugin, text } of added) agent.inject(text, { source: `plugin/${plugin}` })
    agent.#queue.start()
    return agent
  }

  /** Start failed: nothing will run the turns plugins queued during setup. */
  #abandon(error: unknown): void {
    this.#unsubscribe()
    this.#closed = true
    for (const item of this.#queue.drain()) {
      item.reject(new AgentError('AGENT_CLOSED', 'the agent failed to start', {}, { cause: error }))
    }
  }

  /**
   * The tools the model is offered, in order (plugins' first, then the agent's own, then
   * the plugins' tool sets as the running or last step took them).
   */
  get tools(): ReadonlyArray<Tool<unknown>> {
    return this.#board.registry.list()
  }

  /** The plugins, in setup order. */
  get plugins(): readonly string[] {
    return this.#host.plugins
  }

  /** The plugin host (for plugins that call `host.beforeCompaction`). */
  get host(): PluginHost {
    return this.#host
  }

  /** The services the plugins provide (read-only; `get` is undefined for a key nobody provides). */
  get services(): ServiceView {
    return this.#host?.services ?? noServices
  }

  /**
   * The route of the next request, as plugins see it with `ctx.model()`: the model (a
   * selection's, else the agent's, else the adapter's), its window and budgets.
   */
  model(): ModelRoute {
    return this.#route()
  }

  /** Whether a turn is running or queued. */
  get busy(): boolean {
    return this.#queue.busy
  }

  /** The commands plugins registered (name, description, usage, plugin), in registration order. */
  commands(): readonly CommandSummary[] {
    return this.#host.commands
  }

  /**
   * Runs a plugin's command with its argument text, as a logged act (`command/run`, then one
   * `command/done`); resolves with what it answered. Throws `COMMAND_UNKNOWN` for a name no
   * plugin registered (nothing is logged then), and after logging the failure: the
   * command's own `KeelError`, `COMMAND_FAILED` (cause attached) when it threw, or
   * `COMMAND_ABORTED` when `signal` fired before it answered. Either way it settles only once
   * the run and its outcome are durable (the store handle flushed).
   */
  async runCommand(
    name: string,
    args = '',
    options: { source?: string; signal?: AbortSignal } = {},
  ): Promise<string | undefined> {
    if (this.#closed)
      throw new AgentError('AGENT_CLOSED', 'this agent is closed; create a new one to run commands')
    const command = this.#host.command(name)
    const request = {
      name,
      args,
      source: options.source ?? 'user',
      signal: options.signal ?? new AbortController().signal,
    }
    return runDurableCommand(this.session, command, request, () => this.flush())
  }

  /**
   * Changes the system prompt, as a logged act: a `system/message` that replaces the one
   * opening the surface (it stays first; the old one stays in the log). Only between
   * turns. Throws `SYSTEM_PROMPT_UNCHANGEABLE` when the history does not open with a
   * system message (a session started without one keeps none: a system message is never
   * put after other messages).
   */
  setSystemPrompt(text: string): void {
    if (this.#closed) throw new AgentError('AGENT_CLOSED', 'this agent is closed')
    replaceSystemPrompt(this.session, text)
  }

  /**
   * Queues a user message as a new turn; turns run one at a time in the order sent.
   * Resolves with how the turn ended (it rejects only when the log itself could not be
   * written). Throws `AGENT_CLOSED` after close and `AGENT_INPUT_INVALID` for a malformed message.
   */
  send(input: string | UserMessage, options: SendOptions = {}): Promise<TurnResult> {
    if (this.#closed) {
      return Promise.reject(
        new AgentError('AGENT_CLOSED', 'this agent is closed; create a new one to send more turns'),
      )
    }
    let message: UserMessage
    try {
      message = toUserMessage(input)
      if (options.maxTokens !== undefined) positiveInteger('maxTokens', options.maxTokens)
    } catch (error) {
      return Promise.reject(error)
    }
    return new Promise<TurnResult>((resolve, reject) => {
      this.#queue.push(inboxItem(message, options, { resolve, reject }))
    })
  }

  /**
   * Runs one of the agent's tools directly, as a person asked (keel's `!cmd`), outside any
   * model call, through the same permission chain, sandbox and output cap as the model's
   * calls; logged as a turn of its own (see `direct-tool.ts`). Throws `AGENT_CLOSED`, or
   * `AGENT_BUSY` while a turn runs or is queued; every behaviour of the tool is a result.
   */
  async runTool(name: string, input: unknown, options: DirectToolOptions = {}): Promise<DirectToolResult> {
    if (this.#closed)
      throw new AgentError('AGENT_CLOSED', 'this agent is closed; create a new one to run tools')
    if (this.busy || !this.#queue.started) {
      throw new AgentError('AGENT_BUSY', `a turn is running; run ${name} after it ends (or abort it first)`, {
        tool: name,
      })
    }
    return this.#queue.exclusive(() =>
      runDirectTool(this.#runtime, name, input, options, (controller) => {
        this.#controller = controller
      }),
    )
  }

  /**
   * Adds a developer message before the next step: of the running turn, or of the next
   * turn when none runs. Appended as `developer/message` right before that step starts.
   */
  inject(input: string | DeveloperMessage, options: { source?: string } = {}): void {
    if (this.#closed) throw new AgentError('AGENT_CLOSED', 'this agent is closed; inject before closing it')
    const message = toDeveloperMessage(input)
    this.#injections.push(options.source === undefined ? { message } : { message, source: options.source })
  }

  /**
   * Aborts the running turn: the model stream stops (its delivered prefix is kept as an
   * interrupted `assistant/message`), running tools get their signals aborted, and the
   * turn ends `aborted`. Queued turns still run. No-op when idle.
   */
  abort(reason?: unknown): void {
    this.#controller?.abort(reason)
  }

  /**
   * Makes every event appended so far durable (the store handle's `flush()`; a session
   * without a store has nothing to write). The loop flushes at its own durability points;
   * a caller that appends between them — a message queued while a turn runs — flushes
   * here so a crash cannot lose what was accepted.
   */
  flush(): Promise<void> {
    return this.#handle ? this.#handle.flush() : Promise.resolve()
  }

  /** Resolves once no turn is running or queued. */
  idle(): Promise<void> {
    return this.#queue.idle()
  }

  /**
   * Refuses new turns, waits for queued ones to finish, runs the `sessionEnd`
   * interceptors, disposes the plugins (in reverse order), and closes the store handle
   * (flushing it). Idempotent. Throws `PLUGIN_DISPOSE_FAILED` after everything else is
   * closed if a disposer failed.
   */
  close(): Promise<void> {
    if (this.#closing) return this.#closing
    this.#closed = true
    this.#closing = (async () => {
      await this.idle()
      await this.#host.sessionEnd({ reason: this.#failed ? 'error' : 'close' })
      let disposeError: unknown
      try {
        await this.#host.close()
      } catch (error) {
        disposeError = error
      }
      this.#unsubscribe()
      if (this.#handle) await this.#handle.close()
      if (disposeError !== undefined) throw disposeError
    })()
    return this.#closing
  }

  #enqueueFromPlugin(message: UserMessage, source: string | undefined): void {
    // Refused at once, not as a rejected turn only logged: a plugin (a scheduler) must know
    // its message was not queued, so it does not record it as delivered.
    if (this.#closed)
      throw new AgentError('AGENT_CLOSED', 'this agent is closing; the message was not queued')
    this.send(message, source === undefined ? {} : { source }).catch((error: unknown) => {
      const record = errorRecordOf(error, 'AGENT_FAILED')
      this.#log({ ...record, message: `a plugin-queued turn failed: ${record.message}` })
    })
  }

  /** Runs one queued turn; returns what settles its caller's promise. */
  async #runQueued(item: InboxItem): Promise<() => void> {
    this.#turnMaxTokens = item.maxTokens
    try {
      const result = await runTurn(this.#runtime, item, {
        running: (controller) => {
          this.#controller = controller
        },
        inject: (text, source) => this.inject(text, { source }),
      })
      return () => item.resolve(result)
    } catch (error) {
      this.#failed = true
      return () => item.reject(error)
    } finally {
      this.#turnMaxTokens = undefined
    }
  }

  #drainInjections(): void {
    while (this.#injections.length > 0) {
      const { message, source } = this.#injections.shift()!
      this.session.append('developer/message', source === undefined ? { message } : { message, source })
    }
  }
}
