import { createHash } from 'node:crypto'
import { TOOL_NAME_PATTERN } from '@keel/tools'

/** The prefix of every MCP tool's name (`mcp__<server>__<tool>`). */
export const MCP_TOOL_PREFIX = 'mcp__'

/**
 * The name a server's tool gets in the agent: `mcp__<server>__<tool>`, as in Claude Code,
 * with characters outside `A-Za-z0-9_-` replaced by `_`. A name past the model APIs' 64
 * characters, or one that another tool of the same server already maps to, is cut and
 * given a short hash of the tool's own name, so it stays unique and stable.
 */
export function qualifiedToolName(server: string, tool: string, taken: ReadonlySet<string>): string {
  const plain = `${MCP_TOOL_PREFIX}${server}__${tool.replace(/[^A-Za-z0-9_-]/gu, '_')}`
  if (TOOL_NAME_PATTERN.test(plain) && !taken.has(plain)) return plain
  const hash = createHash('sha256').update(`${server}\0${tool}`).digest('hex').slice(0, 8)
  return `${plain.slice(0, 64 - 9)}_${hash}`
}

/** The server a qualified name belongs to, when it is one of ours. */
export function serverOfToolName(name: string): string | undefined {
  if (!name.startsWith(MCP_TOOL_PREFIX)) return undefined
  const rest = name.slice(MCP_TOOL_PREFIX.length)
  const end = rest.indexOf('__')
  return end > 0 ? rest.slice(0, end) : undefined
}
