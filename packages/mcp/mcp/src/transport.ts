// Opening one MCP client over a server's transport, listing its tools, and closing it: the
// SDK calls a connection makes, kept apart from its state machine.
import { errorMessage, isKeelError } from '@keel/base'
import type { ErrorRecord } from '@keel/session'
import { toolEnvironment } from '@keel/tools'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import type { McpErrorCode } from './errors.js'
import { outputSchemaValidator } from './schema.js'
import type { Sdk } from './sdk.js'
import type { ServerSpec } from './spec.js'
import type { BoundedLog } from './stderr-log.js'

/** How Keel introduces itself in the handshake. */
const CLIENT_INFO = { name: 'keel', version: '0.1.0' }

/** Bounds a message a server (or its error) wrote before it goes into a record. */
export function bounded(text: string, max = 500): string {
  return text.length > max ? `${text.slice(0, max)}…` : text
}

/** What {@link openClient} reports back while and after it connects. */
export interface ClientWiring {
  readonly env: NodeJS.ProcessEnv
  readonly stderr: BoundedLog
  /** The handshake's deadline. */
  readonly timeoutMs: number
  /** The transport whose handshake runs (so closing during it can stop it). */
  opening(transport: Transport): void
  /** The server sent `notifications/tools/list_changed`. */
  toolsChanged(client: Client): Promise<void>
  /** The connection closed (the process exited, the HTTP stream ended). */
  closed(client: Client): void
  /** A non-fatal protocol error (an unparsable message). */
  protocolError(message: string): void
}

function isHttp4xx(sdk: Sdk, error: unknown): boolean {
  const code = error instanceof sdk.http.StreamableHTTPError ? error.code : undefined
  return typeof code === 'number' && code >= 400 && code < 500
}

/**
 * A connected client for `spec`: a stdio child (its environment is the agent's less what
 * looks like a credential, plus the entry's `env`; its stderr piped to the bounded log),
 * Streamable HTTP falling back to SSE on a 4xx, or SSE. Throws what the SDK threw.
 */
export async function openClient(
  sdk: Sdk,
  spec: ServerSpec,
  wiring: ClientWiring,
): Promise<{ client: Client; transport: Transport }> {
  const t = spec.transport
  const { SSEClientTransport } = sdk.sse
  if (t.kind === 'stdio') {
    const transport = new sdk.stdio.StdioClientTransport({
      command: t.command,
      args: [...t.args],
      env: toolEnvironment({}, t.env, wiring.env).env,
      cwd: t.cwd,
      stderr: 'pipe',
    })
    transport.stderr?.on('data', (chunk: Buffer) => wiring.stderr.write(chunk))
    return handshake(sdk, transport, wiring)
  }
  const url = new URL(t.url)
  const requestInit = { headers: { ...t.headers } }
  if (t.kind === 'sse') return handshake(sdk, new SSEClientTransport(url, { requestInit }), wiring)
  try {
    return await handshake(sdk, new sdk.http.StreamableHTTPClientTransport(url, { requestInit }), wiring)
  } catch (error) {
    // A server that only speaks the old HTTP+SSE transport answers Streamable HTTP's POST with a 4xx.
    if (!isHttp4xx(sdk, error)) throw error
    return handshake(sdk, new SSEClientTransport(url, { requestInit }), wiring)
  }
}

async function handshake(
  sdk: Sdk,
  transport: Transport,
  wiring: ClientWiring,
): Promise<{ client: Client; transport: Transport }> {
  const client = new sdk.client.Client(CLIENT_INFO, {
    capabilities: {},
    jsonSchemaValidator: outputSchemaValidator(sdk),
  })
  client.setNotificationHandler(sdk.types.ToolListChangedNotificationSchema, () =>
    wiring.toolsChanged(client),
  )
  client.onclose = () => wiring.closed(client)
  client.onerror = (error) => wiring.protocolError(bounded(errorMessage(error)))
  wiring.opening(transport)
  try {
    await client.connect(transport, { timeout: wiring.timeoutMs })
  } catch (error) {
    await closeClient(sdk, client, transport)
    throw error
  }
  return { client, transport }
}

/** Every page of `tools/list` (at most `maxToolPages`), each request within `startupTimeoutMs`. */
export async function listAllTools<T>(
  client: Client,
  limits: { readonly maxToolPages: number; readonly startupTimeoutMs: number },
): Promise<T[]> {
  const all: T[] = []
  let cursor: string | undefined
  for (let page = 0; page < limits.maxToolPages; page++) {
    const result = await client.listTools(cursor === undefined ? undefined : { cursor }, {
      timeout: limits.startupTimeoutMs,
    })
    all.push(...(result.tools as T[]))
    cursor = result.nextCursor
    if (cursor === undefined) break
  }
  // listTools caches output-schema validators per page, each page replacing the last;
  // cache them for the whole list (the method is internal to the SDK's types).
  const cache = (client as unknown as { cacheToolMetadata?: (tools: unknown[]) => void }).cacheToolMetadata
  if (typeof cache === 'function') cache.call(client, all)
  return all
}

/**
 * Closes a client (or a transport that has none yet), terminating a Streamable HTTP
 * session first. Never throws: the connection is being let go, and a server that is
 * already gone has nothing left to close.
 */
export async function closeClient(
  sdk: Sdk,
  client: Client | undefined,
  transport: Transport | undefined,
): Promise<void> {
  const settle = (promise: Promise<unknown>) =>
    promise.then(
      () => undefined,
      () => undefined, // closing something already closed or unreachable: nothing to report
    )
  const http = sdk.http.StreamableHTTPClientTransport
  if (transport instanceof http && transport.sessionId !== undefined)
    await settle(transport.terminateSession())
  if (client) await settle(client.close())
  else if (transport) await settle(transport.close())
}

/**
 * Why a connection attempt failed, as the status and the log show it: the code
 * (`MCP_STARTUP_TIMEOUT` for a handshake past its deadline, a `KeelError`'s own, else
 * `MCP_CONNECT_FAILED`) and a bounded message with the server's last stderr line.
 */
export function connectFailure(
  sdk: Sdk | undefined,
  spec: ServerSpec,
  error: unknown,
  deps: { readonly stderr: BoundedLog; readonly limits: { readonly startupTimeoutMs: number } },
): ErrorRecord {
  if (isKeelError(error)) return { code: error.code, message: bounded(error.message) }
  let code: McpErrorCode = 'MCP_CONNECT_FAILED'
  const types = sdk?.types
  if (types && error instanceof types.McpError && error.code === types.ErrorCode.RequestTimeout) {
    code = 'MCP_STARTUP_TIMEOUT'
  }
  const said = deps.stderr.tail(1)[0]
  const where = spec.transport.kind === 'stdio' ? `\`${spec.transport.command}\`` : 'the server'
  const stderr = said ? `; its last stderr line: ${bounded(said, 200)}` : ''
  return {
    code,
    message: bounded(
      code === 'MCP_STARTUP_TIMEOUT'
        ? `${where} did not finish the MCP handshake within ${deps.limits.startupTimeoutMs} ms${stderr}`
        : `cannot connect to ${where}: ${errorMessage(error)}${stderr}`,
    ),
  }
}
