import { KeelError } from '@keel/base'

/** Every way `@keel/mcp` refuses or reports something. */
export type McpErrorCode =
  /** A server entry or a config file is malformed (the file and JSON path are named). */
  | 'MCP_CONFIG_INVALID'
  /** A server did not finish the MCP handshake within its startup timeout. */
  | 'MCP_STARTUP_TIMEOUT'
  /** A server could not be started or reached (command not found, connection refused, HTTP error). */
  | 'MCP_CONNECT_FAILED'
  /** A server's process exited, or its connection closed, while a call was running. */
  | 'MCP_SERVER_CRASHED'
  /** The server is not connected (restarting, failed, needs approval, disabled). */
  | 'MCP_SERVER_UNAVAILABLE'
  /** A tool's input schema cannot be used (not an object schema, too large, does not compile). */
  | 'MCP_SCHEMA_INVALID'
  /** The server answered a call with a JSON-RPC error. */
  | 'MCP_PROTOCOL_ERROR'
  /** The tool ran and reported an error itself (`isError`). */
  | 'MCP_TOOL_ERROR'
  /** A `/mcp` subcommand or its argument is not known. */
  | 'MCP_COMMAND_INVALID'

/** An error of the MCP client; `details` names the server (and tool, file, path) involved. */
export class McpClientError extends KeelError<McpErrorCode> {}
