// `keel mcp list`: every configured server, started once to see whether it works (a
// project server only when asked to: starting it is running the repository's code).

import { join } from 'node:path'
import { systemClock } from '@keel/agent'
import type { ProjectApprovals } from './approval.js'
import { type ConfigProblem, collectServers, type ServerEntry } from './config.js'
import { defaultKeelHome } from './plugin.js'
import { type McpServerStatus, McpServers } from './servers.js'

/** Options of {@link listMcpServers}. */
export interface ListMcpServersOptions {
  readonly projectDir: string
  readonly keelHome?: string
  readonly env?: NodeJS.ProcessEnv
  /** The preset's servers (the plugin's `mcpServers`). */
  readonly preset?: Readonly<Record<string, ServerEntry>>
  /** Read the project's `.mcp.json` (the plugin's `projectServers`). Default true. */
  readonly projectServers?: boolean
  /** Read `$KEEL_HOME/mcp.json` (the plugin's `userServers`). Default true. */
  readonly userServers?: boolean
  /** Start the project's `.mcp.json` servers too (the person asked for it). Default false. */
  readonly includeProject?: boolean
  /** Handshake deadline per server. Default 15 s. */
  readonly startupTimeoutMs?: number
}

/** Starts each server that may start, waits for every one to connect or fail, stops them, and returns their status. */
export async function listMcpServers(
  options: ListMcpServersOptions,
): Promise<{ servers: McpServerStatus[]; problems: ConfigProblem[] }> {
  const env = options.env ?? process.env
  const keelHome = options.keelHome ?? defaultKeelHome(env)
  const { servers: configured, problems } = collectServers({
    projectDir: options.projectDir,
    keelHome,
    ...(options.preset === undefined ? {} : { preset: options.preset }),
    project: options.projectServers !== false,
    user: options.userServers !== false,
  })
  const approvals: ProjectApprovals = new Map(
    options.includeProject
      ? configured
          .filter((s) => s.scope === 'project')
          .map((s) => [s.name, { digest: s.digest, decision: 'approved' as const }])
      : [],
  )
  const servers = new McpServers({
    configured,
    problems,
    approvals: () => approvals,
    projectDir: options.projectDir,
    env,
    logDir: join(keelHome, 'logs', 'mcp'),
    clock: systemClock,
    random: Math.random,
    limits: {
      startupTimeoutMs: options.startupTimeoutMs ?? 15_000,
      maxRestarts: 0,
      restartBaseDelayMs: 1_000,
      restartMaxDelayMs: 1_000,
      stableAfterMs: 60_000,
      maxToolPages: 64,
    },
    toolTimeoutMs: 60_000,
    onTools: () => {},
    notice: () => {},
  })
  try {
    await servers.start()
    return { servers: servers.status(), problems: [...problems] }
  } finally {
    await servers.close()
  }
}
