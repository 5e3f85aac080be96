// The events @keel/mcp owns. Declared once, here: `pnpm gen-persistence-catalog` generates
// their validators into events.generated.ts (registered on import) and the catalog entries.
import type { ErrorRecord, StepRef } from '@keel/session'
import './events.generated.js'

/**
 * Where a server's entry came from: the plugin's config in the preset, the project's
 * `.mcp.json`, or the person's `$KEEL_HOME/mcp.json`.
 */
export type McpServerScope = 'preset' | 'project' | 'user'

/**
 * What a server is doing:
 * - `connecting`: the first handshake is running.
 * - `connected`: its tools are offered.
 * - `restarting`: it crashed or its connection closed; it is being restarted with back-off
 *   (its tools stay offered; calls wait for it).
 * - `failed`: it could not be started or reached, or kept crashing; its tools are not offered.
 * - `needs-approval`: a project server nobody approved in this session; not started.
 * - `rejected`: a project server the person turned down in this session; not started.
 * - `disabled`: its entry says `"enabled": false`.
 */
export type McpServerState =
  | 'connecting'
  | 'connected'
  | 'restarting'
  | 'failed'
  | 'needs-approval'
  | 'rejected'
  | 'disabled'

/** One server as a step was sent with it. */
export interface McpServerRecord {
  /** @pattern ^[A-Za-z0-9_-]{1,64}$ */
  name: string
  scope: McpServerScope
  transport: 'stdio' | 'http' | 'sse'
  state: McpServerState
  /**
   * How many of its tools were offered.
   * @integer
   * @minimum 0
   */
  tools: number
  /** The server's own name and version, from its handshake. */
  server?: { name: string; version: string }
  /** Why it is `failed` or `restarting` (code and a bounded message). */
  error?: ErrorRecord
}

/** A person's answer about one project server. */
export type McpApprovalDecision = 'approved' | 'rejected'

declare module '@keel/session' {
  interface SessionEventMap {
    /**
     * The MCP servers a step was sent with, whole (latest wins): each server's scope,
     * transport, state and how many tools it offered. Log-only; appended in the open turn
     * before a step's `step/start` when it differs from the last record, next to the
     * agent's `tool/list-changed`, which holds the digest of every tool the step offered.
     * Reading both, a resumed session knows which server a tool came from and says when
     * one has gone or changed.
     * @example {"turn":2,"step":1,"servers":[{"name":"github","scope":"project","transport":"stdio","state":"connected","tools":12,"server":{"name":"github-mcp","version":"1.4.0"}},{"name":"docs","scope":"user","transport":"http","state":"failed","tools":0,"error":{"code":"MCP_CONNECT_FAILED","message":"connect ECONNREFUSED 127.0.0.1:8931"}}]}
     */
    'mcp/servers': StepRef & {
      /** @uniqueBy name */
      servers: McpServerRecord[]
    }

    /**
     * A person approved (or turned down) one server of the project's `.mcp.json`, for this
     * session (`/mcp approve`, `/mcp reject`). Log-only, inside or outside a turn; the
     * latest per server wins. The approval holds for the entry whose canonical JSON digests
     * to `configDigest`: an entry edited since is asked about again. Resume keeps it and a
     * fork inherits it, as with the session's approval rules.
     * @example {"server":"github","configDigest":"sha256:4b227777d4dd1fc61c6f884f48641d02b4d121d3fd328cb08b5531fcacdabf8a","decision":"approved","source":"/home/ada/src/app/.mcp.json"}
     */
    'mcp/project-approval': {
      /** @pattern ^[A-Za-z0-9_-]{1,64}$ */
      server: string
      /** @pattern ^sha256:[0-9a-f]{64}$ */
      configDigest: string
      decision: McpApprovalDecision
      /** @minLength 1 */
      source: string
    }
  }
}
