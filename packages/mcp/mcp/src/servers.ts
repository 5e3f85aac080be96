// The MCP servers of one agent: which may start (project servers wait for approval), their
// connections, the tools they offer together, and their status as `/mcp`, `keel mcp list`
// and the log show it.
import { join } from 'node:path'
import type { Clock } from '@keel/agent'
import { canonicalJson } from '@keel/base'
import type { ErrorRecord } from '@keel/session'
import type { Tool } from '@keel/tools'
import { changedSinceAnswer, type Gate, gateOf, type ProjectApprovals } from './approval.js'
import type { ConfigProblem, ConfiguredServer, ServerScope } from './config.js'
import { type ConnectionLimits, ServerConnection } from './connection.js'
import type { McpServerRecord, McpServerState } from './events.js'
import { resolveServer, type ServerSpec } from './spec.js'
import { BoundedLog } from './stderr-log.js'
import { type SkippedTool, ToolBuilder } from './tools.js'

/** One server as `/mcp` and `keel mcp list` show it. */
export interface McpServerStatus {
  readonly name: string
  readonly scope: ServerScope
  /** The file its entry came from (or `preset`). */
  readonly source: string
  readonly transport: 'stdio' | 'http' | 'sse'
  readonly state: McpServerState
  /** `command args…` or the URL (expanded; headers never shown). */
  readonly target: string
  /** The qualified names of the tools it offers. */
  readonly tools: readonly string[]
  readonly skipped: readonly SkippedTool[]
  readonly server?: { name: string; version: string }
  readonly error?: ErrorRecord
  /** Variables its entry references that are not set. */
  readonly missing: readonly string[]
  /** Where its stderr goes (stdio servers). */
  readonly stderrLog?: string
  /** The last non-fatal protocol error (an unparsable message from the server). */
  readonly protocolError?: string
  /** A project server whose entry changed since the person last answered for it. */
  readonly changedSinceAnswer: boolean
}

/** What the servers need from their owner. */
export interface ServersInit {
  readonly configured: readonly ConfiguredServer[]
  readonly problems: readonly ConfigProblem[]
  /** The project approvals as the log has them now. */
  approvals(): ProjectApprovals
  readonly projectDir: string
  readonly env: NodeJS.ProcessEnv
  /** Where stdio servers' stderr logs go (`<dir>/<server>.log`); none: kept in memory only. */
  readonly logDir?: string
  readonly clock: Clock
  readonly random: () => number
  readonly limits: ConnectionLimits
  readonly toolTimeoutMs: number
  /** The tools changed (replace the agent's tool set). */
  onTools(tools: ReadonlyArray<Tool<unknown>>): void
  /** Something worth telling the person (a log file that cannot be written). */
  notice(text: string): void
}

interface Entry {
  readonly configured: ConfiguredServer
  readonly spec: ServerSpec
  gate: Gate
  connection: ServerConnection | undefined
  started: Promise<void> | undefined
  skipped: SkippedTool[]
  tools: ReadonlyArray<Tool<unknown>>
}

function target(spec: ServerSpec): string {
  const t = spec.transport
  return t.kind === 'stdio' ? [t.command, ...t.args].join(' ') : t.url
}

/** The MCP servers of one agent. */
export class McpServers {
  readonly problems: readonly ConfigProblem[]
  readonly #init: ServersInit
  readonly #entries = new Map<string, Entry>()
  readonly #builder: ToolBuilder
  #closed = false

  constructor(init: ServersInit) {
    this.#init = init
    this.problems = init.problems
    this.#builder = new ToolBuilder(init.toolTimeoutMs)
    for (const configured of init.configured) {
      const spec = resolveServer(configured, init.env, init.projectDir)
      this.#entries.set(configured.name, {
        configured,
        spec,
        gate: gateOf(configured, init.approvals()),
        connection: undefined,
        started: undefined,
        skipped: [],
        tools: [],
      })
    }
  }

  /** Starts every server whose gate is open (in parallel); resolves when each has connected or failed. */
  start(): Promise<void> {
    return Promise.all([...this.#entries.values()].map((e) => this.#start(e))).then(() => {})
  }

  /**
   * Resolves when every started server has connected or failed, and every tool list a
   * server announced as changed has been fetched.
   */
  async ready(): Promise<void> {
    await Promise.all([...this.#entries.values()].map((e) => e.started))
    await Promise.all([...this.#entries.values()].map((e) => e.connection?.listed()))
  }

  /** The entry of `name`, if configured. */
  configured(name: string): ConfiguredServer | undefined {
    return this.#entries.get(name)?.configured
  }

  /** The names of every configured server, in precedence order. */
  names(): string[] {
    return [...this.#entries.keys()]
  }

  /**
   * Opens a project server's gate (after a person approved it) or closes it (rejected,
   * stopping the server if it runs), then starts or stops it; resolves when that is done.
   */
  async setGate(name: string, gate: 'open' | 'rejected'): Promise<void> {
    const entry = this.#entries.get(name)
    if (!entry || entry.gate === 'disabled') return
    entry.gate = gate
    if (gate === 'open') await this.#start(entry)
    else await this.#stop(entry)
  }

  /** Connects a server again (restart count reset); starts it if it was never started. */
  async reconnect(name: string): Promise<void> {
    const entry = this.#entries.get(name)
    if (entry?.gate !== 'open') return
    if (!entry.connection) return this.#start(entry)
    await entry.connection.reconnect()
  }

  /** The last lines of a server's stderr. */
  stderrTail(name: string, lines = 20): string[] {
    return this.#entries.get(name)?.connection?.stderr.tail(lines) ?? []
  }

  /** Every server's status, in precedence order. */
  status(): McpServerStatus[] {
    return [...this.#entries.values()].map((e) => {
      const c = e.connection
      const state: McpServerState = e.gate === 'open' ? (c?.state ?? 'connecting') : e.gate
      const error = e.gate === 'open' ? c?.error : undefined
      // The log's path is worth showing once the server wrote something to it.
      const log = c && c.stderr.tail(1).length > 0 ? c.stderr.file : undefined
      return {
        name: e.spec.name,
        scope: e.spec.scope,
        source: e.spec.source,
        transport: e.spec.transport.kind,
        state,
        target: target(e.spec),
        tools: e.tools.map((t) => t.name),
        skipped: e.skipped,
        ...(c?.server ? { server: c.server } : {}),
        ...(error ? { error } : {}),
        missing: e.spec.missing,
        ...(log ? { stderrLog: log } : {}),
        ...(c?.lastProtocolError ? { protocolError: c.lastProtocolError } : {}),
        changedSinceAnswer: e.gate !== 'open' && changedSinceAnswer(e.configured, this.#init.approvals()),
      }
    })
  }

  /** The servers as the log records them for a step (`mcp/servers`). */
  records(): McpServerRecord[] {
    return this.status().map((s) => ({
      name: s.name,
      scope: s.scope,
      transport: s.transport,
      state: s.state,
      tools: s.tools.length,
      ...(s.server ? { server: s.server } : {}),
      ...(s.error && (s.state === 'failed' || s.state === 'restarting') ? { error: s.error } : {}),
    }))
  }

  /** Every tool offered, server by server. */
  tools(): Array<Tool<unknown>> {
    return [...this.#entries.values()].flatMap((e) => [...e.tools])
  }

  /** Stops every server. */
  async close(): Promise<void> {
    this.#closed = true
    await Promise.all([...this.#entries.values()].map((e) => this.#stop(e)))
  }

  #start(entry: Entry): Promise<void> {
    if (this.#closed || entry.gate !== 'open') return Promise.resolve()
    if (entry.started) return entry.started
    const name = entry.spec.name
    const logFile =
      entry.spec.transport.kind === 'stdio' && this.#init.logDir !== undefined
        ? join(this.#init.logDir, `${name}.log`)
        : undefined
    const connection = new ServerConnection(entry.spec, {
      clock: this.#init.clock,
      random: this.#init.random,
      env: this.#init.env,
      stderr: new BoundedLog(logFile, {
        onError: (message) => this.#init.notice(`MCP server '${name}': ${message}`),
      }),
      limits: {
        ...this.#init.limits,
        startupTimeoutMs: entry.spec.startupTimeoutMs ?? this.#init.limits.startupTimeoutMs,
      },
      changed: () => this.#changed(entry),
    })
    entry.connection = connection
    entry.started = connection.start()
    return entry.started
  }

  async #stop(entry: Entry): Promise<void> {
    const connection = entry.connection
    entry.connection = undefined
    entry.started = undefined
    if (connection) await connection.close()
    if (entry.tools.length > 0 || entry.skipped.length > 0) {
      entry.tools = []
      entry.skipped = []
      this.#publish()
    }
  }

  /** A connection's state or tools changed: rebuild its tools, and publish when they differ. */
  #changed(entry: Entry): void {
    const connection = entry.connection
    if (!connection || this.#closed) return
    const offered = connection.state === 'connected' || connection.state === 'restarting'
    const built = offered ? this.#builder.build(connection) : { tools: [], skipped: [] }
    const same =
      built.tools.length === entry.tools.length && built.tools.every((t, i) => t === entry.tools[i])
    entry.skipped = built.skipped
    if (same) return
    entry.tools = built.tools
    this.#publish()
  }

  #publish(): void {
    const tools = this.tools()
    this.#builder.keepOnly(tools)
    this.#init.onTools(tools)
  }
}

/** Whether two server record lists say the same (the log gets a new one only when not). */
export function sameRecords(
  a: readonly McpServerRecord[] | undefined,
  b: readonly McpServerRecord[],
): boolean {
  return a !== undefined && canonicalJson(a) === canonicalJson(b)
}
