import type { ConfigProblem } from './config.js'
import type { McpServerStatus } from './servers.js'

/** What `@keel/mcp` offers the other plugins and the UI (`agent.services.get('mcp.servers')`). */
export interface McpServersService {
  /** Every configured server's status, in precedence order (preset, project, user). */
  status(): readonly McpServerStatus[]
  /** What was wrong with the configuration files and the preset's entries. */
  problems(): readonly ConfigProblem[]
  /** Resolves when every server that may start has connected or failed. */
  ready(): Promise<void>
}

declare module '@keel/tools' {
  interface ServiceMap {
    /** The agent's MCP servers: status, configuration problems, readiness. */
    'mcp.servers': McpServersService
  }
}
