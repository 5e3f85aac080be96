import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isKeelError } from '@keel/base'
import {
  type AssistantMessage,
  type DeveloperMessage,
  developerMessageSchema,
  type LlmAdapter,
  LlmError,
  messageText,
  type StreamRecord,
  type TokenUsage,
  type ToolCallBlock,
  type ToolResultMessage,
  type ToolSpec,
  type UserMessage,
  userMessageSchema,
} from '@keel/llm'
import type { ErrorRecord, Session, SessionEventMap, SessionEventType, TurnEndReason } from '@keel/session'
import {
  executeTool,
  isConcurrencySafe,
  type ParsedToolInput,
  parseToolInput,
  type Tool,
  type ToolContext,
  type ToolOutput,
  ToolRegistry,
  toolFacts,
} from '@keel/tools'
import { AgentError } from './errors.js'
import './events.js'
import { type HostServices, type PluginEntry, PluginHost } from './host.js'
import type { AgentObserver, ToolCallDelta } from './observer.js'
import type { BeforeToolDecision, Clock, ToolCallInfo } from './plugin.js'
import { backoffDelay, defaultRetryOptions, type RetryOptions, sleep, systemClock } from './retry.js'
import { PartialMessage } from './stream.js'

/** A question put to the host's answerer when an interceptor decided `ask`. */
export interface ToolQuestion extends ToolCallInfo {
  /** Why the interceptor asks. */
  readonly reason: string
  /** The plugin that asked. */
  readonly plugin?: string
  /** Aborted when the turn is cancelled while the question is open. */
  readonly signal: AbortSignal
}

/** Answers `ask` decisions (a UI prompt, an approval service). Throwing counts as `deny`. */
export type ToolAnswerer = (question: ToolQuestion) => 'allow' | 'deny' | Promise<'allow' | 'deny'>

/**
 * The part of a store's `SessionHandle` (`@keel/store`) the agent uses: any
 * `SessionHandle` fits. `directory`, when a backend exposes one (JSONL), is where tool
 * outputs over their cap are stored aside.
 */
export interface StoreHandle {
  readonly session: Session
  /** Resolves when every event appended so far is durable. */
  flush(): Promise<void>
  /** Flushes and releases the writer lock. */
  close(): Promise<void>
  readonly directory?: string
}

/** Options of {@link createAgent}. */
export interface AgentOptions {
  /** The model. */
  llm: LlmAdapter
  /**
   * Where the log goes: a store handle (flushed before each model call and at each turn
   * end, closed with the agent) or a bare in-memory session.
   */
  session: StoreHandle | Session
  /** Plugins, set up in order (disposed in reverse on close). */
  plugins?: readonly PluginEntry[]
  /** Tools besides the plugins' (the plugins' come first). */
  tools?: ReadonlyArray<Tool<unknown>>
  /** Working directory for tools. */
  cwd: string
  /** Appended as `system/message` when the session has none yet. */
  systemPrompt?: string
  /** Model id; the adapter's default when absent. */
  model?: string
  /** Output token cap per model call. */
  maxTokens?: number
  /** Steps (model calls) per turn before it ends with `max-steps`. Default 50. */
  maxSteps?: number
  /** Concurrency-safe calls of one step that may run at once. Default 4. */
  maxParallelTools?: number
  /** Retries of retryable model errors. Default {@link defaultRetryOptions}. */
  retry?: Partial<RetryOptions>
  /** Time and timers (backoff waits, stream records of failed attempts). Default: the wall clock. */
  clock?: Clock
  /** Jitter source in [0, 1). Default `Math.random`. */
  random?: () => number
  /** Live callbacks for UIs. */
  observers?: readonly AgentObserver[]
  /** Decides `ask` decisions; without one, `ask` fails closed as a deny (`TOOL_ASK_UNANSWERED`). */
  answerer?: ToolAnswerer
  /**
   * Where tool outputs over their size cap are written. Default: the `directory` of the
   * store handle plus `/tool-outputs` when the handle has one (JSONL), else
   * `<os tmpdir>/keel-tool-outputs/<session id>`.
   */
  toolOutputDir?: string
  /** Result size cap for tools that set none. Default: the tools runtime's. */
  maxResultChars?: number
}

/** Options of one {@link Agent.send}. */
export interface SendOptions {
  /** Recorded as `user/message.source` (e.g. `schedule/<id>`) when the text was not typed by a person. */
  source?: string
  /** Aborts this turn (before it starts, it then starts and ends at once as `aborted`). */
  signal?: AbortSignal
}

/** How a turn ended. */
export interface TurnResult {
  readonly turn: number
  readonly reason: TurnEndReason
  readonly error?: ErrorRecord
  /** The last assistant message committed in the turn, if any (interrupted ones included). */
  readonly message?: AssistantMessage
  /** Its text blocks, concatenated (empty when there is no message). */
  readonly text: string
}

interface InboxItem {
  message: UserMessage
  source?: string
  signal?: AbortSignal
  resolve(result: TurnResult): void
  reject(error: unknown): void
}

type AttemptResult =
  | { ok: true; message: AssistantMessage; usage?: TokenUsage; record: StreamRecord }
  | { ok: false; error: unknown; partial: PartialMessage; usage?: TokenUsage; record: StreamRecord }

type ModelOutcome =
  | { kind: 'message'; message: AssistantMessage; usage?: TokenUsage; record: StreamRecord }
  | { kind: 'interrupted'; message?: AssistantMessage }
  | { kind: 'failed'; error: ErrorRecord }

interface ToolOutcome {
  output: ToolOutput
  storedAside?: { path: string; chars: number }
  ran: boolean
}

interface PreparedCall {
  call: ToolCallBlock
  tool: Tool<unknown> | undefined
  parsed: ParsedToolInput<unknown> | undefined
  safe: boolean
}

interface Deferred<T> {
  promise: Promise<T>
  resolve(value: T): void
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void
  const promise = new Promise<T>((r) => {
    resolve = r
  })
  return { promise, resolve }
}

function isHandle(value: StoreHandle | Session): value is StoreHandle {
  return typeof (value as StoreHandle).flush === 'function' && 'session' in value
}

function errorOutput(code: string, message: string): ToolOutput {
  return { content: [{ type: 'text', text: `Error [${code}]: ${message}` }], isError: true, errorCode: code }
}

function errorRecordOf(error: unknown): ErrorRecord {
  if (isKeelError(error)) return { code: error.code, message: error.message }
  return {
    code: 'LLM_ADAPTER_FAILED',
    message: `the model adapter failed unexpectedly: ${error instanceof Error ? error.message : String(error)}`,
  }
}

function positiveInteger(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new AgentError('AGENT_OPTIONS_INVALID', `${name} must be a positive integer, got ${value}`, {
      option: name,
    })
  }
  return value
}

function nonNegative(name: string, value: number): number {
  if (!Number.isFinite(value) || value < 0) {
    throw new AgentError('AGENT_OPTIONS_INVALID', `${name} must be a non-negative number, got ${value}`, {
      option: name,
    })
  }
  return value
}

/**
 * Creates an agent over a session: validates the options, appends the system prompt to a
 * blank session, sets the plugins up (config validated, tools collected), and checks every
 * tool (unique valid names, schemas convertible to JSON Schema). Throws {@link AgentError}
 * or the tools runtime's `ToolRegistryError`; on failure, plugins already set up are disposed,
 * the agent itself has appended nothing, and the store handle stays open (it is the caller's
 * until an agent owns it).
 */
export async function createAgent(options: AgentOptions): Promise<Agent> {
  return Agent.start(options)
}

/**
 * One agent: an inbox of user messages run as turns, one at a time, each a loop of steps
 * (one model call, then the tools it asked for). Everything that happens is appended to the
 * session log; live UIs follow along through observers.
 */
export class Agent {
  readonly session: Session
  readonly #handle: StoreHandle | undefined
  readonly #llm: LlmAdapter
  readonly #cwd: string
  readonly #clock: Clock
  readonly #random: () => number
  readonly #observers: readonly AgentObserver[]
  readonly #answerer: ToolAnswerer | undefined
  readonly #model: string | undefined
  readonly #maxTokens: number | undefined
  readonly #maxSteps: number
  readonly #maxParallel: number
  readonly #retry: RetryOptions
  readonly #toolOutputDir: string
  readonly #maxResultChars: number | undefined
  #host!: PluginHost
  #registry!: ToolRegistry
  #specs: ToolSpec[] = []

  readonly #queue: InboxItem[] = []
  readonly #injections: Array<{ message: DeveloperMessage; source?: string }> = []
  #running = false
  /** False until plugins are set up: turns queued during setup wait for it. */
  #started = false
  #idleWaiters: Array<() => void> = []
  #controller: AbortController | null = null
  #closed = false
  #closing: Promise<void> | null = null
  #unsubscribe: () => void = () => {}

  private constructor(options: AgentOptions) {
    this.#handle = isHandle(options.session) ? options.session : undefined
    this.session = isHandle(options.session) ? options.session.session : options.session
    this.#llm = options.llm
    this.#cwd = options.cwd
    this.#clock = options.clock ?? systemClock
    this.#random = options.random ?? Math.random
    this.#observers = options.observers ?? []
    this.#answerer = options.answerer
    this.#model = options.model
    this.#maxTokens = options.maxTokens
    this.#maxSteps = positiveInteger('maxSteps', options.maxSteps ?? 50)
    this.#maxParallel = positiveInteger('maxParallelTools', options.maxParallelTools ?? 4)
    const retry = { ...defaultRetryOptions, ...options.retry }
    this.#retry = {
      maxRetries: nonNegative('retry.maxRetries', retry.maxRetries),
      baseDelayMs: nonNegative('retry.baseDelayMs', retry.baseDelayMs),
      maxDelayMs: nonNegative('retry.maxDelayMs', retry.maxDelayMs),
    }
    if (!Number.isInteger(this.#retry.maxRetries)) {
      throw new AgentError(
        'AGENT_OPTIONS_INVALID',
        `retry.maxRetries must be an integer, got ${retry.maxRetries}`,
        {
          option: 'retry.maxRetries',
        },
      )
    }
    if (options.maxResultChars !== undefined) positiveInteger('maxResultChars', options.maxResultChars)
    this.#maxResultChars = options.maxResultChars
    const directory = this.#handle?.directory
    this.#toolOutputDir =
      options.toolOutputDir ??
      (typeof directory === 'string'
        ? join(directory, 'tool-outputs')
        : join(tmpdir(), 'keel-tool-outputs', this.session.id))
  }

  /** @internal Use {@link createAgent}. */
  static async start(options: AgentOptions): Promise<Agent> {
    const agent = new Agent(options)
    const session = agent.session
    if (agent.#observers.some((o) => o.onEvent)) {
      agent.#unsubscribe = session.subscribe((event) => agent.#notify('onEvent', event))
    }
    const services: HostServices = {
      session,
      cwd: agent.#cwd,
      clock: agent.#clock,
      enqueue: (message, opts) => agent.#enqueueFromPlugin(message, opts?.source),
      inject: (message, opts) => agent.inject(message, opts),
      display: (notice) => agent.#notify('onDisplay', notice),
    }
    try {
      agent.#host = await PluginHost.start(options.plugins ?? [], services)
    } catch (error) {
      agent.#abandon(error)
      throw error
    }
    try {
      agent.#registry = new ToolRegistry([...agent.#host.tools, ...(options.tools ?? [])])
      agent.#specs = agent.#registry.specs()
    } catch (error) {
      agent.#abandon(error)
      await agent.#host.close().catch(() => {})
      throw error
    }
    if (options.systemPrompt !== undefined && !session.events.some((e) => e.type === 'system/message')) {
      session.append('system/message', {
        message: { role: 'system', content: [{ type: 'text', text: options.systemPrompt }] },
      })
    }
    agent.#started = true
    if (agent.#queue.length > 0) void agent.#pump()
    return agent
  }

  /** Start failed: nothing will run the turns plugins queued during setup. */
  #abandon(error: unknown): void {
    this.#unsubscribe()
    this.#closed = true
    for (const item of this.#queue.splice(0)) {
      item.reject(new AgentError('AGENT_CLOSED', 'the agent failed to start', {}, { cause: error }))
    }
  }

  /** The tools the model is offered, in order (plugins' first). */
  get tools(): ReadonlyArray<Tool<unknown>> {
    return this.#registry.list()
  }

  /** The plugins, in setup order. */
  get plugins(): readonly string[] {
    return this.#host.plugins
  }

  /** Whether a turn is running or queued. */
  get busy(): boolean {
    return this.#running || this.#queue.length > 0
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
    } catch (error) {
      return Promise.reject(error)
    }
    return new Promise<TurnResult>((resolve, reject) => {
      const item: InboxItem = { message, resolve, reject }
      if (options.source !== undefined) item.source = options.source
      if (options.signal !== undefined) item.signal = options.signal
      this.#queue.push(item)
      void this.#pump()
    })
  }

  /**
   * Adds a developer message before the next step: of the running turn, or of the next
   * turn when none runs. Appended as `developer/message` right before that step starts.
   */
  inject(input: string | DeveloperMessage, options: { source?: string } = {}): void {
    if (this.#closed) throw new AgentError('AGENT_CLOSED', 'this agent is closed; inject before closing it')
    const message: DeveloperMessage =
      typeof input === 'string' ? { role: 'developer', content: [{ type: 'text', text: input }] } : input
    const result = developerMessageSchema.safeParse(message)
    if (!result.success) {
      throw new AgentError(
        'AGENT_INPUT_INVALID',
        `inject: not a developer message: ${result.error.issues[0]!.message}`,
      )
    }
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

  /** Resolves once no turn is running or queued. */
  idle(): Promise<void> {
    if (!this.busy) return Promise.resolve()
    return new Promise((resolve) => this.#idleWaiters.push(resolve))
  }

  /**
   * Refuses new turns, waits for queued ones to finish, disposes the plugins (in reverse
   * order), and closes the store handle (flushing it). Idempotent. Throws
   * `PLUGIN_DISPOSE_FAILED` after everything else is closed if a disposer failed.
   */
  close(): Promise<void> {
    if (this.#closing) return this.#closing
    this.#closed = true
    this.#closing = (async () => {
      await this.idle()
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

  // ---------------------------------------------------------------------------------------
  // inbox

  #enqueueFromPlugin(message: UserMessage, source: string | undefined): void {
    this.send(message, source === undefined ? {} : { source }).catch((error: unknown) => {
      console.error(
        `keel: a plugin-queued turn failed: ${error instanceof Error ? error.message : String(error)}`,
      )
    })
  }

  async #pump(): Promise<void> {
    if (this.#running || !this.#started) return
    this.#running = true
    try {
      while (this.#queue.length > 0) {
        const item = this.#queue.shift()!
        try {
          item.resolve(await this.#runTurn(item))
        } catch (error) {
          item.reject(error)
        }
      }
    } finally {
      this.#running = false
      const waiters = this.#idleWaiters
      this.#idleWaiters = []
      for (const resolve of waiters) resolve()
    }
  }

  // ---------------------------------------------------------------------------------------
  // turns and steps

  async #runTurn(item: InboxItem): Promise<TurnResult> {
    const session = this.session
    const turn = session.lastTurn + 1
    const controller = new AbortController()
    const signal = controller.signal
    const onExternalAbort = (): void => controller.abort(item.signal?.reason)
    if (item.signal?.aborted) controller.abort(item.signal.reason)
    else item.signal?.addEventListener('abort', onExternalAbort, { once: true })
    this.#controller = controller
    let step = 0
    let last: AssistantMessage | undefined
    let end: { reason: TurnEndReason; error?: ErrorRecord } | undefined
    const usedCallIds = new Set<string>()
    try {
      this.#append('turn/start', { turn })
      this.#append(
        'user/message',
        item.source === undefined
          ? { message: item.message }
          : { message: item.message, source: item.source },
      )
      while (end === undefined) {
        if (signal.aborted) {
          end = { reason: 'aborted' }
          break
        }
        if (step >= this.#maxSteps) {
          end = { reason: 'max-steps' }
          break
        }
        const next = step + 1
        const before = await this.#host.beforeStep({ turn, step: next })
        if (before.decision.action === 'reject') {
          end = {
            reason: 'rejected',
            error: {
              code: 'STEP_REJECTED',
              message: `plugin '${before.plugin}' rejected step ${next}: ${before.decision.reason}`,
            },
          }
          break
        }
        if (signal.aborted) continue
        this.#drainInjections()
        step = next
        this.#append('step/start', { turn, step })
        const outcome = await this.#callModel(turn, step, signal, usedCallIds)
        if (outcome.kind !== 'message') {
          if (outcome.kind === 'interrupted' && outcome.message) last = outcome.message
          this.#append('step/end', { turn, step })
          end = outcome.kind === 'failed' ? { reason: 'error', error: outcome.error } : { reason: 'aborted' }
          break
        }
        const message = uniqueCallIds(outcome.message, usedCallIds, step)
        const data: SessionEventMap['assistant/message'] = { turn, step, message, stream: outcome.record }
        if (outcome.usage) data.usage = outcome.usage
        this.#append('assistant/message', data)
        last = message
        const calls = message.content.filter((b): b is ToolCallBlock => b.type === 'tool-call')
        if (calls.length > 0) await this.#runTools(turn, step, calls, signal)
        this.#append('step/end', { turn, step })
        if (signal.aborted) {
          end = { reason: 'aborted' }
          break
        }
        if (calls.length === 0) {
          const stopping = await this.#host.turnStopping({ turn, step })
          if (stopping.decision.action === 'continue') {
            this.#append('user/message', {
              message: { role: 'user', content: [{ type: 'text', text: stopping.decision.message }] },
              source: `plugin/${stopping.plugin}`,
            })
          } else {
            end = { reason: 'completed' }
          }
        }
      }
      this.#append(
        'turn/end',
        end.error ? { turn, reason: end.reason, error: end.error } : { turn, reason: end.reason },
      )
      await this.#flush()
    } catch (error) {
      await this.#closeAfterFailure(turn, error)
      throw error
    } finally {
      item.signal?.removeEventListener('abort', onExternalAbort)
      this.#controller = null
    }
    const result: { -readonly [K in keyof TurnResult]: TurnResult[K] } = {
      turn,
      reason: end.reason,
      text: last ? messageText(last) : '',
    }
    if (end.error) result.error = end.error
    if (last) result.message = last
    return result
  }

  /** Something unexpected threw (a store write, a bug): end the turn honestly if the log still accepts it. */
  async #closeAfterFailure(turn: number, error: unknown): Promise<void> {
    try {
      const open = this.session.openTurn
      if (open?.turn !== turn) return
      if (open.step !== null) this.#append('step/end', { turn, step: open.step })
      this.#append('turn/end', {
        turn,
        reason: 'error',
        error: {
          code: isKeelError(error) ? error.code : 'AGENT_FAILED',
          message: error instanceof Error ? error.message : String(error),
        },
      })
      await this.#flush()
    } catch {
      // The log refuses writes (that is what failed); the store closes the turn as
      // `interrupted` when the session is next opened.
    }
  }

  #drainInjections(): void {
    while (this.#injections.length > 0) {
      const { message, source } = this.#injections.shift()!
      this.#append('developer/message', source === undefined ? { message } : { message, source })
    }
  }

  // ---------------------------------------------------------------------------------------
  // model calls

  async #callModel(
    turn: number,
    step: number,
    signal: AbortSignal,
    usedCallIds: Set<string>,
  ): Promise<ModelOutcome> {
    for (let attempt = 1; ; attempt++) {
      await this.#flush()
      const result = await this.#attempt(turn, step, signal)
      if (result.ok)
        return { kind: 'message', message: result.message, usage: result.usage, record: result.record }
      if (signal.aborted) return this.#commitInterrupted(turn, step, attempt, result, usedCallIds)
      const error = errorRecordOf(result.error)
      this.#append('assistant/attempt', { turn, step, attempt, stream: result.record, error })
      const llmError = result.error instanceof LlmError ? result.error : undefined
      if (!llmError?.retryable) return { kind: 'failed', error }
      if (attempt > this.#retry.maxRetries) {
        return {
          kind: 'failed',
          error: {
            code: error.code,
            message: `${error.message} (gave up after ${attempt} attempt${attempt === 1 ? '' : 's'})`,
          },
        }
      }
      const delayMs = backoffDelay(attempt, this.#retry, this.#random, llmError.retryAfterMs)
      const retry: SessionEventMap['llm/retry'] = { turn, step, attempt, delayMs, error }
      if (llmError.status !== undefined) retry.status = llmError.status
      if (llmError.retryAfterMs !== undefined)
        retry.retryAfterMs = Math.max(0, Math.round(llmError.retryAfterMs))
      this.#append('llm/retry', retry)
      this.#notify('onRetry', { turn, step, attempt, delayMs, error })
      if (!(await sleep(this.#clock, delayMs, signal))) return { kind: 'interrupted' }
    }
  }

  async #attempt(turn: number, step: number, signal: AbortSignal): Promise<AttemptResult> {
    const startedAt = this.#clock.now()
    let firstChunkAt: number | undefined
    let chunks = 0
    let usage: TokenUsage | undefined
    const partial = new PartialMessage()
    const observers = this.#observers
    try {
      const stream = this.#llm.stream({
        model: this.#model,
        messages: this.session.deriveMessages().slice(),
        tools: this.#specs,
        maxTokens: this.#maxTokens,
        signal,
      })
      for await (const chunk of stream) {
        // Chunks the adapter had buffered before the abort are not part of the delivered prefix.
        if (signal.aborted) throw new LlmError('aborted', 'the turn was aborted during the model stream')
        chunks++
        if (firstChunkAt === undefined) firstChunkAt = this.#clock.now()
        switch (chunk.type) {
          case 'text-delta':
            partial.text(chunk.text)
            if (observers.length > 0) this.#notify('onTextDelta', { turn, step, text: chunk.text })
            break
          case 'reasoning-delta':
            partial.reasoning(chunk.text)
            if (observers.length > 0) this.#notify('onReasoningDelta', { turn, step, text: chunk.text })
            break
          case 'tool-call-delta':
            partial.toolCall(chunk.index, chunk.id, chunk.name, chunk.argumentsDelta)
            if (observers.length > 0) {
              const delta: { -readonly [K in keyof ToolCallDelta]: ToolCallDelta[K] } = {
                turn,
                step,
                index: chunk.index,
                argumentsDelta: chunk.argumentsDelta,
              }
              if (chunk.id !== undefined) delta.id = chunk.id
              if (chunk.name !== undefined) delta.name = chunk.name
              this.#notify('onToolCallDelta', delta)
            }
            break
          case 'usage':
            usage = chunk.usage
            break
          case 'finish': {
            const done: AttemptResult = { ok: true, message: chunk.message, record: chunk.record }
            const finalUsage = chunk.usage ?? usage
            if (finalUsage) done.usage = finalUsage
            return done
          }
        }
      }
      throw new LlmError(
        'malformed-response',
        `the ${this.#llm.provider} stream ended without a finish chunk`,
      )
    } catch (error) {
      // The adapter's record of the failed call when it has one (it knows the response id
      // and the wire chunks); otherwise what the agent saw.
      let record: StreamRecord
      if (error instanceof LlmError && error.record) record = error.record
      else {
        record = {
          provider: this.#llm.provider,
          model: this.#model ?? this.#llm.model,
          startedAt,
          endedAt: this.#clock.now(),
          chunks,
        }
        if (firstChunkAt !== undefined) record.firstChunkAt = firstChunkAt
      }
      const failed: AttemptResult = { ok: false, error, partial, record }
      if (usage) failed.usage = usage
      return failed
    }
  }

  /**
   * An abort mid-stream: the delivered prefix becomes an interrupted `assistant/message`
   * (complete tool calls kept, each answered with a `TOOL_ABORTED` result so the history
   * stays well-formed); with nothing delivered, the attempt is logged instead.
   */
  #commitInterrupted(
    turn: number,
    step: number,
    attempt: number,
    result: Extract<AttemptResult, { ok: false }>,
    usedCallIds: Set<string>,
  ): ModelOutcome {
    const message = uniqueCallIds(result.partial.prefix(), usedCallIds, step)
    if (message.content.length === 0) {
      this.#append('assistant/attempt', {
        turn,
        step,
        attempt,
        stream: result.record,
        error: {
          code: 'LLM_ABORTED',
          message: 'the turn was aborted before the model delivered any content',
        },
      })
      return { kind: 'interrupted' }
    }
    const data: SessionEventMap['assistant/message'] = {
      turn,
      step,
      message,
      stream: result.record,
      interrupted: true,
    }
    if (result.usage) data.usage = result.usage
    this.#append('assistant/message', data)
    for (const block of message.content) {
      if (block.type !== 'tool-call') continue
      this.#append('tool/call', {
        turn,
        step,
        callId: block.id,
        name: block.name,
        arguments: block.arguments,
      })
    }
    for (const block of message.content) {
      if (block.type !== 'tool-call') continue
      this.#commitResult(turn, step, block, {
        output: errorOutput('TOOL_ABORTED', `${block.name} was not run: the turn was aborted.`),
        ran: false,
      })
    }
    return { kind: 'interrupted', message }
  }

  // ---------------------------------------------------------------------------------------
  // tools

  /**
   * Logs every call, then runs them: consecutive concurrency-safe calls together (at most
   * `maxParallelTools` at once), every other call alone, in model order. Results are
   * committed in model order as soon as each one and all before it are done.
   */
  async #runTools(turn: number, step: number, calls: ToolCallBlock[], signal: AbortSignal): Promise<void> {
    for (const call of calls) {
      this.#append('tool/call', { turn, step, callId: call.id, name: call.name, arguments: call.arguments })
    }
    const prepared = calls.map((call) => this.#prepare(call))
    const batches: number[][] = []
    for (let i = 0; i < prepared.length; i++) {
      const lastBatch = batches[batches.length - 1]
      if (prepared[i]!.safe && lastBatch && prepared[lastBatch[0]!]!.safe) lastBatch.push(i)
      else batches.push([i])
    }
    const slots = prepared.map(() => deferred<ToolOutcome>())
    const run = async (i: number): Promise<void> => {
      slots[i]!.resolve(await this.#runOne(turn, step, prepared[i]!, signal))
    }
    const executor = (async () => {
      for (const batch of batches) {
        if (batch.length === 1) await run(batch[0]!)
        else await runBounded(batch, this.#maxParallel, run)
      }
    })()
    for (let i = 0; i < prepared.length; i++) {
      const outcome = await slots[i]!.promise
      this.#commitResult(turn, step, prepared[i]!.call, outcome)
    }
    await executor
  }

  #prepare(call: ToolCallBlock): PreparedCall {
    const tool = this.#registry.get(call.name)
    if (!tool) return { call, tool, parsed: undefined, safe: false }
    const parsed = parseToolInput(tool, call.arguments)
    return { call, tool, parsed, safe: parsed.ok && isConcurrencySafe(tool, parsed.input) }
  }

  async #runOne(
    turn: number,
    step: number,
    prepared: PreparedCall,
    signal: AbortSignal,
  ): Promise<ToolOutcome> {
    const { call, tool, parsed } = prepared
    try {
      if (!tool || !parsed) {
        return {
          output: errorOutput(
            'TOOL_NOT_FOUND',
            `there is no tool named ${JSON.stringify(call.name)}; available tools: ${this.#registry.names().join(', ') || '(none)'}.`,
          ),
          ran: false,
        }
      }
      if (!parsed.ok) return { output: parsed.output, ran: false }
      if (signal.aborted) return aborted(call)
      const info: ToolCallInfo = {
        turn,
        step,
        call,
        tool,
        input: parsed.input,
        facts: toolFacts(tool, parsed.input, this.#cwd),
        signal,
      }
      const before = await this.#host.beforeTool(info)
      const decision = await this.#resolveAsk(before.decision, before.plugin, info, signal)
      if (decision.action === 'deny') {
        const by = before.plugin ? ` by plugin '${before.plugin}'` : ''
        return {
          output: errorOutput(
            decision.errorCode ?? 'TOOL_DENIED',
            `${call.name} was not run: denied${by}: ${decision.reason}`,
          ),
          ran: false,
        }
      }
      if (signal.aborted) return aborted(call)
      this.#notify('onToolCallStarted', { turn, step, call })
      const context: ToolContext = {
        signal,
        cwd: this.#cwd,
        callId: call.id,
        session: this.session,
        progress: (progress) => this.#notify('onToolProgress', { turn, step, call, progress }),
      }
      const outcome = await executeTool(tool, parsed.input, context, {
        outputDir: this.#toolOutputDir,
        ...(this.#maxResultChars === undefined ? {} : { maxResultChars: this.#maxResultChars }),
      })
      const after = await this.#host.afterTool({ ...info, output: outcome.output })
      if (after.decision.action === 'block') {
        return {
          output: errorOutput(
            'TOOL_RESULT_BLOCKED',
            `${call.name} ran, but plugin '${after.plugin}' withheld its output: ${after.decision.reason}`,
          ),
          ran: true,
        }
      }
      return outcome
    } catch (error) {
      return {
        output: errorOutput(
          'TOOL_FAILED',
          `${call.name} failed inside the agent: ${error instanceof Error ? error.message : String(error)}`,
        ),
        ran: false,
      }
    }
  }

  async #resolveAsk(
    decision: BeforeToolDecision,
    plugin: string | undefined,
    info: ToolCallInfo,
    signal: AbortSignal,
  ): Promise<Exclude<BeforeToolDecision, { action: 'ask' }>> {
    if (decision.action !== 'ask') return decision
    if (!this.#answerer) {
      return {
        action: 'deny',
        errorCode: 'TOOL_ASK_UNANSWERED',
        reason: `${decision.reason} (approval was required but nobody can answer here, so it fails closed)`,
      }
    }
    try {
      const question: ToolQuestion =
        plugin === undefined
          ? { ...info, reason: decision.reason, signal }
          : { ...info, reason: decision.reason, plugin, signal }
      const answer = await this.#answerer(question)
      if (answer === 'allow') return { action: 'allow' }
      return {
        action: 'deny',
        errorCode: 'TOOL_DENIED_BY_USER',
        reason: `${decision.reason} (the user declined)`,
      }
    } catch (error) {
      return {
        action: 'deny',
        errorCode: 'TOOL_ASK_FAILED',
        reason: `${decision.reason} (asking failed: ${error instanceof Error ? error.message : String(error)})`,
      }
    }
  }

  #commitResult(turn: number, step: number, call: ToolCallBlock, outcome: ToolOutcome): void {
    const message: ToolResultMessage = {
      role: 'tool',
      toolCallId: call.id,
      toolName: call.name,
      content: outcome.output.content,
    }
    if (outcome.output.isError) message.isError = true
    const data: SessionEventMap['tool/result'] = { turn, step, message }
    const errorCode = outcome.output.isError ? (outcome.output.errorCode ?? 'TOOL_FAILED') : undefined
    if (errorCode !== undefined) data.errorCode = errorCode
    if (outcome.storedAside) data.storedAside = outcome.storedAside
    this.#append('tool/result', data)
    const finished =
      errorCode === undefined
        ? { turn, step, call, result: message, ran: outcome.ran }
        : { turn, step, call, result: message, ran: outcome.ran, errorCode }
    this.#notify('onToolCallFinished', finished)
  }

  // ---------------------------------------------------------------------------------------
  // plumbing

  #append<T extends SessionEventType>(type: T, data: SessionEventMap[T]): void {
    this.session.append(type, data)
  }

  async #flush(): Promise<void> {
    if (this.#handle) await this.#handle.flush()
  }

  #notify<K extends keyof AgentObserver>(method: K, arg: Parameters<NonNullable<AgentObserver[K]>>[0]): void {
    for (const observer of this.#observers) {
      const fn = observer[method] as ((value: typeof arg) => void) | undefined
      if (!fn) continue
      try {
        fn.call(observer, arg)
      } catch (error) {
        console.error(
          `keel: observer ${method} threw: ${error instanceof Error ? error.message : String(error)}`,
        )
      }
    }
  }
}

/**
 * Tool call ids must be unique within a turn (they pair calls with results). Some
 * OpenAI-compatible servers reuse ids (`call_0` every step): a reused id gets a
 * `_<step>_<index>` suffix, so the history sent back stays well-formed. Ids are otherwise
 * kept exactly as the model sent them. Records the ids in `used`.
 */
function uniqueCallIds(message: AssistantMessage, used: Set<string>, step: number): AssistantMessage {
  let changed = false
  let index = 0
  const content = message.content.map((block) => {
    if (block.type !== 'tool-call') return block
    let id: string = block.id
    if (used.has(id)) {
      const base = `${block.id}_${step}_${index}`
      id = base
      for (let n = 2; used.has(id); n++) id = `${base}_${n}`
      changed = true
    }
    used.add(id)
    index++
    return id === block.id ? block : { ...block, id: id as ToolCallBlock['id'] }
  })
  return changed ? { ...message, content } : message
}

function aborted(call: ToolCallBlock): ToolOutcome {
  return {
    output: errorOutput('TOOL_ABORTED', `${call.name} was not run: the turn was aborted.`),
    ran: false,
  }
}

function toUserMessage(input: string | UserMessage): UserMessage {
  const message: UserMessage =
    typeof input === 'string' ? { role: 'user', content: [{ type: 'text', text: input }] } : input
  const result = userMessageSchema.safeParse(message)
  if (!result.success) {
    throw new AgentError(
      'AGENT_INPUT_INVALID',
      `send: not a user message: ${result.error.issues[0]!.message}`,
    )
  }
  return message
}

/** Runs `task` over `items` with at most `limit` in flight. */
async function runBounded(
  items: readonly number[],
  limit: number,
  task: (item: number) => Promise<void>,
): Promise<void> {
  let next = 0
  const worker = async (): Promise<void> => {
    while (next < items.length) await task(items[next++]!)
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker))
}
