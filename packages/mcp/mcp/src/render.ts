// The status of the servers as text, for `/mcp` and `keel mcp list` alike.
import type { ConfigProblem } from './config.js'
import type { McpServerStatus } from './servers.js'

/**
 * `text` with every control character (C0, DEL, C1: what escape sequences are made of)
 * replaced, so what a server wrote cannot move the cursor or restyle the terminal; `keep`
 * names characters left alone (`\n` for multi-line text).
 */
export function printable(text: string, replacement = ' ', keep = ''): string {
  let out = ''
  for (const char of text) {
    const code = char.codePointAt(0)!
    const control = code < 0x20 || (code >= 0x7f && code <= 0x9f)
    out += control && !keep.includes(char) ? replacement : char
  }
  return out
}

/** One display line of at most `max` characters. */
function cut(text: string, max: number): string {
  const one = printable(text)
  return one.length > max ? `${one.slice(0, max - 1)}…` : one
}

const STATE_TEXT: Record<McpServerStatus['state'], string> = {
  connecting: 'connecting',
  connected: 'connected',
  restarting: 'restarting',
  failed: 'failed',
  'needs-approval': 'needs approval',
  rejected: 'rejected',
  disabled: 'disabled',
}

/** One config problem on one line: `file $.path: message`. */
export function renderProblem(problem: ConfigProblem): string {
  return `${problem.source} ${problem.path}: ${problem.message}`
}

/**
 * The servers, one block each: name, scope, transport, state, tool count, the server's own
 * name and version, what it runs or reaches, then its error, unset variables, skipped
 * tools and stderr log when there are any; the config problems last.
 */
export function renderStatus(
  servers: readonly McpServerStatus[],
  problems: readonly ConfigProblem[],
  options: { tools?: boolean; approvalHint?: string } = {},
): string {
  if (servers.length === 0 && problems.length === 0) {
    return 'no MCP servers configured (.mcp.json in the project, $KEEL_HOME/mcp.json, or mcpServers in the preset)'
  }
  const width = Math.max(4, ...servers.map((s) => s.name.length))
  const lines: string[] = []
  for (const s of servers) {
    const version = s.server ? ` (${cut(s.server.name, 40)} ${cut(s.server.version, 20)})` : ''
    const count =
      s.state === 'connected' || s.state === 'restarting'
        ? `  ${s.tools.length} tool${s.tools.length === 1 ? '' : 's'}`
        : ''
    lines.push(
      `${s.name.padEnd(width)}  ${s.scope.padEnd(7)}  ${s.transport.padEnd(5)}  ${STATE_TEXT[s.state]}${count}${version}`,
    )
    lines.push(`${' '.repeat(width)}  ${cut(s.target, 120)}`)
    if (s.error) lines.push(`${' '.repeat(width)}  ${s.error.code}: ${cut(s.error.message, 300)}`)
    if (s.protocolError) lines.push(`${' '.repeat(width)}  last protocol error: ${cut(s.protocolError, 200)}`)
    if (s.changedSinceAnswer)
      lines.push(`${' '.repeat(width)}  its entry changed since it was last answered for`)
    if (s.missing.length > 0) {
      lines.push(
        `${' '.repeat(width)}  not set: ${s.missing.map((n) => `\${${n}}`).join(', ')} (left as written)`,
      )
    }
    for (const skip of s.skipped.slice(0, 5)) {
      lines.push(`${' '.repeat(width)}  tool ${cut(skip.tool, 60)} not offered: ${cut(skip.reason, 200)}`)
    }
    if (options.tools) for (const name of s.tools) lines.push(`${' '.repeat(width)}  - ${name}`)
    if (s.stderrLog && (s.state === 'failed' || s.state === 'restarting')) {
      lines.push(`${' '.repeat(width)}  stderr: ${s.stderrLog}`)
    }
  }
  if (servers.some((s) => s.state === 'needs-approval')) {
    lines.push(
      options.approvalHint ??
        'project servers start once approved for this session: /mcp approve <name> (or all), /mcp reject <name>',
    )
  }
  for (const problem of problems) lines.push(`config: ${cut(renderProblem(problem), 400)}`)
  return lines.join('\n')
}
