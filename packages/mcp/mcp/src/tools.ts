// A server's listed tools as Keel tools: `mcp__<server>__<tool>`, the server's JSON Schema
// validated on call, its hints mapped to Keel's annotations, its results turned into text
// and image blocks. The agent's tool runtime (`executeTool`) then applies the deadline, the
// abort, the size cap and the aside storage, as for every tool.
import { canonicalJson, errorMessage } from '@keel/base'
import { defineTool, type Tool } from '@keel/tools'
import type { ListedTool, ServerConnection } from './connection.js'
import { type McpToolHints, toKeelAnnotations, toToolOutput } from './content.js'
import { qualifiedToolName } from './names.js'
import { jsonSchemaInput } from './schema.js'

/** Longest tool description offered to the model (servers write whole manuals). */
export const MAX_DESCRIPTION_CHARS = 2048

/** A tool that could not be offered, and why. */
export interface SkippedTool {
  readonly server: string
  readonly tool: string
  readonly reason: string
}

function describe(server: string, listed: ListedTool): string {
  const own = (listed.description ?? '').trim() || (listed.title ?? '').trim()
  const text = own === '' ? `Tool ${listed.name} of the MCP server ${server}.` : own
  return text.length > MAX_DESCRIPTION_CHARS ? `${text.slice(0, MAX_DESCRIPTION_CHARS - 1)}…` : text
}

/**
 * Builds Keel tools from listed tools, reusing a tool built before for an identical listing
 * (`cache`, by the listing's canonical JSON), so a `tools/list_changed` that changes one
 * tool rebuilds one. A tool whose schema cannot be used is skipped and reported.
 */
export class ToolBuilder {
  readonly #cache = new Map<string, Tool<unknown>>()

  constructor(private readonly defaultTimeoutMs: number) {}

  build(connection: ServerConnection): { tools: Array<Tool<unknown>>; skipped: SkippedTool[] } {
    const server = connection.spec.name
    const remote = connection.spec.transport.kind !== 'stdio'
    const timeoutMs = connection.spec.timeoutMs ?? this.defaultTimeoutMs
    const taken = new Set<string>()
    const tools: Array<Tool<unknown>> = []
    const skipped: SkippedTool[] = []
    for (const listed of connection.tools) {
      if (typeof listed?.name !== 'string' || listed.name === '') {
        skipped.push({ server, tool: String(listed?.name), reason: 'it has no name' })
        continue
      }
      const name = qualifiedToolName(server, listed.name, taken)
      taken.add(name)
      const key = `${name}\0${timeoutMs}\0${canonicalJson(listed)}`
      let tool = this.#cache.get(key)
      if (!tool) {
        try {
          tool = this.#make(connection, listed, name, remote, timeoutMs)
        } catch (error) {
          skipped.push({
            server,
            tool: listed.name,
            reason: errorMessage(error),
          })
          continue
        }
        this.#cache.set(key, tool)
      }
      tools.push(tool)
    }
    return { tools, skipped }
  }

  /** Forgets the tools of servers that are gone (keeps the cache from growing across restarts). */
  keepOnly(tools: ReadonlyArray<Tool<unknown>>): void {
    const live = new Set(tools)
    for (const [key, tool] of this.#cache) if (!live.has(tool)) this.#cache.delete(key)
  }

  #make(
    connection: ServerConnection,
    listed: ListedTool,
    name: string,
    remote: boolean,
    timeoutMs: number,
  ): Tool<unknown> {
    const server = connection.spec.name
    const annotations = toKeelAnnotations(listed.annotations as McpToolHints | undefined, remote)
    return defineTool<Record<string, unknown>>({
      name,
      description: describe(server, listed),
      inputSchema: jsonSchemaInput(
        connection.sdk!,
        listed.inputSchema,
        `MCP server '${server}', tool ${listed.name}`,
      ),
      annotations,
      isConcurrencySafe: annotations.readOnly,
      timeoutMs,
      async call(input, context) {
        const result = await connection.call(listed.name, input, context.signal, timeoutMs)
        return toToolOutput(result, name)
      },
    }) as Tool<unknown>
  }
}
