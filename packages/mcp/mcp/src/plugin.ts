import { homedir } from 'node:os'
import { join } from 'node:path'
import { definePlugin, type PluginDefinition } from '@keel/agent'
import { errorMessage, type JsonValue } from '@keel/base'
import { type Projection, registerProjection } from '@keel/session'
import { z } from 'zod'
import { projectApprovalsProjection } from './approval.js'
import { mcpCommand } from './command.js'
import { collectServers, projectFile, serverMapSchema } from './config.js'
import { ownedEventTypes } from './events.generated.js'
import type { McpServerRecord } from './events.js'
import { renderProblem } from './render.js'
import { type McpServerStatus, McpServers, sameRecords } from './servers.js'
import type { McpServersService } from './services.js'

const ms = z.number().int().positive().max(3_600_000)

/** The MCP plugin's config, as a preset holds it. */
export const mcpConfigSchema = z.strictObject({
  /**
   * This preset's servers, in Claude Code's entry format (`command`/`args`/`env`/`cwd`, or
   * `type` `http`/`sse` with `url`/`headers`; `timeout`, `startupTimeout`, `enabled`). They
   * win over entries of the same name in `.mcp.json` and `$KEEL_HOME/mcp.json`.
   */
  mcpServers: serverMapSchema.default({}),
  /** Read the project's `.mcp.json` (its servers still start only once approved). */
  projectServers: z.boolean().default(true),
  /** Read `$KEEL_HOME/mcp.json`. */
  userServers: z.boolean().default(true),
  /** How long a server's handshake and tool list may take. */
  startupTimeoutMs: ms.default(30_000),
  /** A tool call's deadline when its server's entry sets no `timeout`. */
  toolTimeoutMs: ms.default(120_000),
  /** Restarts of a server that crashed or lost its connection. */
  restart: z
    .strictObject({
      /** Restarts in a row before the server counts as failed. */
      maxAttempts: z.number().int().min(0).max(100).default(5),
      baseDelayMs: ms.default(1_000),
      maxDelayMs: ms.default(30_000),
      /** Connected this long, a server's restart count starts again. */
      stableAfterMs: ms.default(60_000),
    })
    .default({ maxAttempts: 5, baseDelayMs: 1_000, maxDelayMs: 30_000, stableAfterMs: 60_000 }),
})

/** The validated config of {@link mcpPlugin}. */
export type McpConfig = z.output<typeof mcpConfigSchema>

/** What only the running program gives the plugin (never part of a preset). */
export interface McpPluginOptions {
  /** The environment `${VAR}` references read and stdio servers inherit (default `process.env`). */
  env?: NodeJS.ProcessEnv
  /** Where `mcp.json` and the stderr logs live (default `$KEEL_HOME`, else `~/.keel`). */
  keelHome?: string
  /** Jitter of the restart back-off (default `Math.random`). */
  random?: () => number
}

/** `$KEEL_HOME`, else `~/.keel`. */
export function defaultKeelHome(env: NodeJS.ProcessEnv): string {
  return env.KEEL_HOME && env.KEEL_HOME !== '' ? env.KEEL_HOME : join(homedir(), '.keel')
}

/** The latest `mcp/servers` record (what the last step was sent with). */
const lastServersProjection: Projection<readonly McpServerRecord[] | undefined> = registerProjection<
  readonly McpServerRecord[] | undefined
>({
  name: '@keel/mcp/servers',
  init: () => undefined,
  apply: (state, event) => (event.type === 'mcp/servers' ? event.data.servers : state),
  checkpoint: {
    version: 1,
    save: (servers) => (servers ?? null) as unknown as JsonValue,
    restore: (saved) => (saved === null ? undefined : (saved as unknown as readonly McpServerRecord[])),
  },
})

function startupNotes(status: readonly McpServerStatus[], servers: McpServers, headless: boolean): string[] {
  const notes = servers.problems.map((p) => `MCP config: ${renderProblem(p)}`)
  for (const s of status) {
    if (s.missing.length > 0) {
      notes.push(
        `MCP server '${s.name}': ${s.missing.map((n) => `\${${n}}`).join(', ')} not set (left as written)`,
      )
    }
  }
  const waiting = status.filter((s) => s.state === 'needs-approval')
  if (waiting.length > 0) {
    const list = waiting
      .map((s) => `${s.name} (${s.target}${s.changedSinceAnswer ? '; changed since last answered' : ''})`)
      .join(', ')
    notes.push(
      headless
        ? `MCP: the project's servers are not used in a headless session (nobody can approve them): ${list}`
        : `MCP: this project's ${projectFile('.')} defines servers that are not used until you approve them for this session: ${list}. In keel's interactive UI type /mcp approve <name> (or /mcp approve all), or /mcp reject <name>.`,
    )
  }
  return notes
}

/**
 * The MCP plugin: reads the servers (preset, project `.mcp.json`, `$KEEL_HOME/mcp.json`),
 * starts those it may (project servers once approved), offers their tools through its tool
 * set as `mcp__<server>__<tool>`, records before each step which servers it was sent with
 * (`mcp/servers`, when that changed), provides `mcp.servers` and the `/mcp` command.
 */
export function mcpPlugin(options: McpPluginOptions = {}): PluginDefinition<McpConfig> {
  return definePlugin<McpConfig>({
    name: '@keel/mcp',
    config: mcpConfigSchema,
    events: ownedEventTypes,
    provides: ['mcp.servers'],
    setup(ctx) {
      const { config, session } = ctx
      const env = options.env ?? process.env
      const keelHome = options.keelHome ?? defaultKeelHome(env)
      const headless = session.header.agentComposition?.interactive === false
      const { servers: configured, problems } = collectServers({
        projectDir: ctx.cwd,
        keelHome,
        preset: config.mcpServers,
        project: config.projectServers,
        user: config.userServers,
      })
      const set = ctx.registerToolSet()
      const servers = new McpServers({
        configured,
        problems,
        approvals: () => session.project(projectApprovalsProjection),
        projectDir: ctx.cwd,
        env,
        logDir: join(keelHome, 'logs', 'mcp'),
        clock: ctx.clock,
        random: options.random ?? Math.random,
        limits: {
          startupTimeoutMs: config.startupTimeoutMs,
          maxRestarts: config.restart.maxAttempts,
          restartBaseDelayMs: config.restart.baseDelayMs,
          restartMaxDelayMs: config.restart.maxDelayMs,
          stableAfterMs: config.restart.stableAfterMs,
          maxToolPages: 64,
        },
        toolTimeoutMs: config.toolTimeoutMs,
        onTools: (tools) => {
          try {
            set.replace(tools)
          } catch (error) {
            ctx.display('mcp', `MCP tools not offered: ${errorMessage(error)}`)
          }
        },
        notice: (text) => ctx.display('mcp', text),
      })
      const service: McpServersService = {
        status: () => servers.status(),
        problems: () => servers.problems,
        ready: () => servers.ready(),
      }
      ctx.provide('mcp.servers', service)
      ctx.registerCommand('mcp', mcpCommand(servers, session))
      ctx.intercept({
        sessionStart({ source }) {
          if (source !== 'compact') {
            for (const note of startupNotes(servers.status(), servers, headless)) ctx.display('mcp', note)
          }
          return { action: 'continue' }
        },
        async beforeStep({ turn, step }) {
          const starting = servers.status().filter((s) => s.state === 'connecting')
          if (starting.length > 0) {
            const names = starting.map((s) => s.name).join(', ')
            ctx.display(
              'mcp',
              `MCP: waiting for ${names} to start (at most ${config.startupTimeoutMs / 1000} s)`,
            )
          }
          await servers.ready()
          const records = servers.records()
          const last = session.project(lastServersProjection)
          if (!(last === undefined && records.length === 0) && !sameRecords(last, records)) {
            session.append('mcp/servers', { turn, step, servers: records })
          }
          return { action: 'enter' }
        },
      })
      void servers.start()
      return () => servers.close()
    },
  })
}
