// One MCP server for one agent: connects over its transport (stdio, Streamable HTTP with a
// fallback to SSE, or SSE), lists its tools (every page), follows `tools/list_changed`,
// runs calls, and restarts a server that crashed or dropped its connection, with back-off,
// until it has failed too often. Every way a call can fail becomes a coded error; nothing
// it does writes to the terminal.
import { backoffDelay, type Clock } from '@keel/agent'
import { errorMessage } from '@keel/base'
import type { ErrorRecord } from '@keel/session'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { McpClientError } from './errors.js'
import type { McpServerState } from './events.js'
import { loadSdk, type Sdk } from './sdk.js'
import type { ServerSpec } from './spec.js'
import type { BoundedLog } from './stderr-log.js'
import { bounded, closeClient, connectFailure, listAllTools, openClient } from './transport.js'

/** A tool as `tools/list` describes it (only what Keel reads; the rest is ignored). */
export interface ListedTool {
  readonly name: string
  readonly title?: string
  readonly description?: string
  readonly inputSchema: unknown
  readonly annotations?: Record<string, unknown>
}

/** How a server is restarted and how long it may take. */
export interface ConnectionLimits {
  /** Handshake and tool-list deadline. */
  readonly startupTimeoutMs: number
  /** Restarts in a row (without a stable period between) before the server counts as failed. */
  readonly maxRestarts: number
  readonly restartBaseDelayMs: number
  readonly restartMaxDelayMs: number
  /** Connected this long, the restart count starts again from zero. */
  readonly stableAfterMs: number
  /** Pages of `tools/list` followed. */
  readonly maxToolPages: number
}

/** What a connection needs from its owner. */
export interface ConnectionDeps {
  readonly clock: Clock
  readonly random: () => number
  /** The agent's environment (the child inherits it, less what looks like a credential). */
  readonly env: NodeJS.ProcessEnv
  /** Where a stdio server's stderr goes. */
  readonly stderr: BoundedLog
  readonly limits: ConnectionLimits
  /** The server's tools or state changed (the owner updates the agent's tool set). */
  changed(): void
}

/** One server's connection, its tools, and its state. */
export class ServerConnection {
  readonly spec: ServerSpec
  readonly #deps: ConnectionDeps
  #state: McpServerState = 'connecting'
  #tools: readonly ListedTool[] = []
  #error: ErrorRecord | undefined
  #server: { name: string; version: string } | undefined
  #sdk: Sdk | undefined
  #client: Client | undefined
  #transport: Transport | undefined
  /** The transport of a handshake in progress. */
  #opening: Transport | undefined
  #generation = 0
  #restarts = 0
  #connectedAt = 0
  #timer: unknown
  #closed = false
  /** Settles when the server is connected (true) or given up on (false); replaced on each loss. */
  #ready: Promise<boolean>
  #settleReady: (connected: boolean) => void = () => {}
  #listing: Promise<void> | undefined
  #relist = false
  #lastProtocolError: string | undefined

  constructor(spec: ServerSpec, deps: ConnectionDeps) {
    this.spec = spec
    this.#deps = deps
    this.#ready = this.#newReady()
  }

  get state(): McpServerState {
    return this.#state
  }

  get tools(): readonly ListedTool[] {
    return this.#tools
  }

  get error(): ErrorRecord | undefined {
    return this.#error
  }

  /** The server's name and version from its handshake. */
  get server(): { name: string; version: string } | undefined {
    return this.#server
  }

  /** The SDK, once the first connection attempt loaded it (tools are built with its Ajv). */
  get sdk(): Sdk | undefined {
    return this.#sdk
  }

  /** The last non-fatal protocol error the SDK reported (shown by `/mcp`). */
  get lastProtocolError(): string | undefined {
    return this.#lastProtocolError
  }

  /** The server's stderr (stdio servers). */
  get stderr(): BoundedLog {
    return this.#deps.stderr
  }

  /**
   * Resolves once a `tools/list_changed` already received has been listed, so the next
   * step is offered the new list (the notification arrives before the call that caused it
   * returns; its listing may take a round trip more).
   */
  async listed(): Promise<void> {
    await this.#listing
  }

  /** The first connection. Never throws: a failure leaves the state `failed` with its error. */
  async start(): Promise<void> {
    const ok = await this.#attempt()
    if (!ok) this.#giveUp()
  }

  /** Drops the current connection (if any) and connects again, restart count reset. */
  async reconnect(): Promise<void> {
    if (this.#closed) return
    this.#restarts = 0
    if (this.#timer !== undefined) this.#deps.clock.clearTimeout(this.#timer)
    this.#timer = undefined
    await this.#drop()
    this.#ready = this.#newReady()
    this.#setState('connecting')
    if (!(await this.#attempt())) this.#giveUp()
  }

  /**
   * Calls a tool. Waits for a restarting server (bounded by `signal`). Throws
   * {@link McpClientError}: `MCP_SERVER_UNAVAILABLE` (not connected, or gave up),
   * `MCP_SERVER_CRASHED` (the process exited or the connection closed mid-call; the server
   * is restarted), `MCP_PROTOCOL_ERROR` (a JSON-RPC error). When `signal` aborted (the
   * turn's abort or the call's deadline) the SDK's error is rethrown as is, for the tool
   * runtime to report `TOOL_ABORTED` or `TOOL_TIMEOUT`.
   */
  async call(
    tool: string,
    args: Record<string, unknown>,
    signal: AbortSignal,
    timeoutMs: number,
  ): Promise<Record<string, unknown>> {
    const client = await this.#connected(signal)
    try {
      // Our own deadline (the signal) fires first; the SDK's is a backstop.
      return (await client.callTool({ name: tool, arguments: args }, undefined, {
        signal,
        timeout: timeoutMs + 5_000,
      })) as Record<string, unknown>
    } catch (error) {
      if (signal.aborted) throw error
      throw this.#callError(this.#sdk!, client, tool, error)
    }
  }

  /** Stops the server (a stdio child gets its stdin closed, then SIGTERM, then SIGKILL). */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    if (this.#timer !== undefined) this.#deps.clock.clearTimeout(this.#timer)
    this.#settleReady(false)
    await this.#drop()
    await this.#deps.stderr.close()
  }

  #isConnected(): boolean {
    return this.#state === 'connected'
  }

  #newReady(): Promise<boolean> {
    return new Promise((resolve) => {
      this.#settleReady = resolve
    })
  }

  #setState(state: McpServerState, error?: ErrorRecord): void {
    this.#state = state
    this.#error = error
    this.#deps.changed()
  }

  async #connected(signal: AbortSignal): Promise<Client> {
    if (this.#state === 'connected' && this.#client) return this.#client
    if (this.#state === 'restarting' || this.#state === 'connecting') {
      let onAbort = () => {}
      const aborted = new Promise<'aborted'>((resolve) => {
        onAbort = () => resolve('aborted')
        signal.addEventListener('abort', onAbort, { once: true })
      })
      try {
        const outcome = await Promise.race([this.#ready, aborted])
        if (outcome === 'aborted') throw signal.reason ?? new Error('aborted')
      } finally {
        signal.removeEventListener('abort', onAbort)
      }
      if (this.#isConnected() && this.#client) return this.#client
    }
    const why = this.#error ? ` (${this.#error.code}: ${this.#error.message})` : ''
    throw new McpClientError(
      'MCP_SERVER_UNAVAILABLE',
      `MCP server '${this.spec.name}' is ${this.#state}${why}; its tools cannot run now (/mcp shows its state, /mcp reconnect ${this.spec.name} tries again)`,
      { server: this.spec.name, state: this.#state },
    )
  }

  #callError(sdk: Sdk, client: Client, tool: string, error: unknown): McpClientError {
    const name = this.spec.name
    const { McpError, ErrorCode } = sdk.types
    if (error instanceof McpError && error.code !== ErrorCode.ConnectionClosed) {
      return new McpClientError(
        'MCP_PROTOCOL_ERROR',
        `MCP server '${name}' answered ${tool} with error ${error.code}: ${bounded(error.message)}`,
        { server: name, tool, rpcCode: error.code },
      )
    }
    // The connection is gone (the process exited, the HTTP server went away): restart it.
    this.#lost(client, error)
    const said = this.#deps.stderr.tail(1)[0]
    return new McpClientError(
      'MCP_SERVER_CRASHED',
      `MCP server '${name}' ${this.spec.transport.kind === 'stdio' ? 'exited' : 'dropped the connection'} while ${tool} ran${said ? ` (its last stderr line: ${bounded(said, 200)})` : ''}; what the call did is unknown. The server is being restarted; check the effect before calling again.`,
      { server: name, tool },
    )
  }

  /** One connection attempt: transport, handshake, tool list. True when connected. */
  async #attempt(): Promise<boolean> {
    const generation = ++this.#generation
    try {
      if (this.spec.problem !== undefined) {
        throw new McpClientError('MCP_CONFIG_INVALID', this.spec.problem, { server: this.spec.name })
      }
      this.#sdk ??= await loadSdk()
      const current = () => generation === this.#generation
      const { client, transport } = await openClient(this.#sdk, this.spec, {
        env: this.#deps.env,
        stderr: this.#deps.stderr,
        timeoutMs: this.#deps.limits.startupTimeoutMs,
        opening: (t) => {
          if (current()) this.#opening = t
        },
        toolsChanged: async (c) => {
          if (current()) await this.#refreshTools(c)
        },
        closed: (c) => {
          if (current()) this.#lost(c, new Error('the connection closed'))
        },
        // Not fatal (an unparsable line); fatal ones close the connection, which `closed` handles.
        protocolError: (message) => {
          if (current()) this.#lastProtocolError = message
        },
      })
      this.#opening = undefined
      if (!current() || this.#closed) {
        await closeClient(this.#sdk, client, transport)
        return false
      }
      this.#client = client
      this.#transport = transport
      this.#tools = await listAllTools<ListedTool>(client, this.#deps.limits)
      const version = client.getServerVersion()
      if (version) this.#server = { name: bounded(version.name, 100), version: bounded(version.version, 50) }
      this.#connectedAt = this.#deps.clock.now()
      this.#setState('connected')
      this.#settleReady(true)
      return true
    } catch (error) {
      if (generation === this.#generation) {
        this.#error = connectFailure(this.#sdk, this.spec, error, this.#deps)
        await this.#drop()
      }
      return false
    }
  }

  /** `tools/list_changed`: list again (one listing at a time; a notice during one lists once more after it). */
  async #refreshTools(client: Client): Promise<void> {
    if (this.#listing) {
      this.#relist = true
      return this.#listing
    }
    this.#listing = (async () => {
      do {
        this.#relist = false
        try {
          const tools = await listAllTools<ListedTool>(client, this.#deps.limits)
          if (client !== this.#client || this.#closed) return
          this.#tools = tools
          this.#deps.changed()
        } catch (error) {
          // The list could not be fetched: keep the last one; a dead connection reports itself through onclose.
          this.#error = {
            code: 'MCP_PROTOCOL_ERROR',
            message: bounded(`tools/list failed: ${errorMessage(error)}`),
          }
        }
      } while (this.#relist && !this.#closed)
    })().finally(() => {
      this.#listing = undefined
    })
    return this.#listing
  }

  /** The connection of `client` is gone: restart with back-off, or give up. */
  #lost(client: Client, error: unknown): void {
    if (this.#closed || client !== this.#client || this.#state !== 'connected') return
    const transport = this.#transport
    this.#client = undefined
    this.#transport = undefined
    void closeClient(this.#sdk!, client, transport)
    if (this.#deps.clock.now() - this.#connectedAt >= this.#deps.limits.stableAfterMs) this.#restarts = 0
    this.#ready = this.#newReady()
    const said = this.#deps.stderr.tail(1)[0]
    const message = bounded(
      `${this.spec.transport.kind === 'stdio' ? 'the server process exited' : 'the connection was lost'} (${errorMessage(error)})${said ? `; its last stderr line: ${said}` : ''}`,
    )
    this.#scheduleRestart({ code: 'MCP_SERVER_CRASHED', message })
  }

  #scheduleRestart(error: ErrorRecord): void {
    if (this.#restarts >= this.#deps.limits.maxRestarts) {
      this.#error = error
      this.#giveUp()
      return
    }
    this.#restarts++
    const limits = this.#deps.limits
    const delay = backoffDelay(
      this.#restarts,
      {
        maxRetries: limits.maxRestarts,
        baseDelayMs: limits.restartBaseDelayMs,
        maxDelayMs: limits.restartMaxDelayMs,
      },
      this.#deps.random,
    )
    this.#setState('restarting', {
      code: error.code,
      message: bounded(`${error.message}; restart ${this.#restarts} of ${limits.maxRestarts} in ${delay} ms`),
    })
    this.#timer = this.#deps.clock.setTimeout(() => {
      this.#timer = undefined
      void this.#attempt().then((ok) => {
        if (!ok && !this.#closed) this.#scheduleRestart(this.#error ?? error)
      })
    }, delay)
  }

  /** Failed for good (until `/mcp reconnect`): no tools, calls refused. */
  #giveUp(): void {
    if (this.#closed) return
    this.#tools = []
    this.#setState('failed', this.#error)
    this.#settleReady(false)
  }

  /**
   * Closes the current client and transport, if any, and a transport still in its
   * handshake (a stdio child that has not answered yet is stopped, not left running).
   */
  async #drop(): Promise<void> {
    const { sdk } = this
    const client = this.#client
    const transport = this.#transport ?? this.#opening
    this.#client = undefined
    this.#transport = undefined
    this.#opening = undefined
    this.#generation++
    if (sdk) await closeClient(sdk, client, transport)
  }
}
