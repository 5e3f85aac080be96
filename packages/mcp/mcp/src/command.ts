// `/mcp`: the servers' status, and the person's say over the project's servers.
import type { PluginCommand } from '@keel/agent'
import type { Session } from '@keel/session'
import { McpClientError } from './errors.js'
import { printable, renderStatus } from './render.js'
import type { McpServers } from './servers.js'

const USAGE = '[list|tools|approve <name|all>|reject <name|all>|reconnect <name>|log <name>]'

function requireName(servers: McpServers, name: string | undefined, verb: string): string {
  if (name === undefined || name === '') {
    throw new McpClientError(
      'MCP_COMMAND_INVALID',
      `/mcp ${verb} needs a server name; servers: ${servers.names().join(', ') || '(none)'}`,
    )
  }
  if (!servers.configured(name)) {
    throw new McpClientError(
      'MCP_COMMAND_INVALID',
      `no MCP server named '${name}'; servers: ${servers.names().join(', ') || '(none)'}`,
      {
        server: name,
      },
    )
  }
  return name
}

/** The project servers `/mcp approve|reject <name|all>` applies to. */
function projectTargets(servers: McpServers, arg: string | undefined, verb: string): string[] {
  if (arg === 'all') {
    return servers
      .status()
      .filter(
        (s) =>
          s.scope === 'project' &&
          (s.state === 'needs-approval' || s.state === 'rejected' || verb === 'reject'),
      )
      .map((s) => s.name)
  }
  const name = requireName(servers, arg, verb)
  if (servers.configured(name)!.scope !== 'project') {
    throw new McpClientError(
      'MCP_COMMAND_INVALID',
      `'${name}' is not a project server (it comes from ${servers.configured(name)!.source}); only the project's .mcp.json servers need approval`,
      { server: name },
    )
  }
  return [name]
}

/**
 * The `/mcp` command. `approve` and `reject` record the person's answer in the log
 * (`mcp/project-approval`, for the entry as it is now) and start or stop the server; the
 * answer says how it went.
 */
export function mcpCommand(servers: McpServers, session: Session): PluginCommand {
  const answer = async (verb: 'approve' | 'reject', arg: string | undefined): Promise<string> => {
    const names = projectTargets(servers, arg, verb)
    if (names.length === 0) return `no project server to ${verb}`
    for (const name of names) {
      const configured = servers.configured(name)!
      session.append('mcp/project-approval', {
        server: name,
        configDigest: configured.digest,
        decision: verb === 'approve' ? 'approved' : 'rejected',
        source: configured.source,
      })
    }
    await Promise.all(names.map((name) => servers.setGate(name, verb === 'approve' ? 'open' : 'rejected')))
    const shown = servers.status().filter((s) => names.includes(s.name))
    return renderStatus(shown, [])
  }
  return {
    description: 'MCP servers: status, tools, approve or reject project servers, reconnect, stderr log',
    usage: USAGE,
    async run(args) {
      const [verb = 'list', arg, ...extra] = args
        .trim()
        .split(/\s+/u)
        .filter((w) => w !== '')
      if (extra.length > 0) throw new McpClientError('MCP_COMMAND_INVALID', `usage: /mcp ${USAGE}`)
      switch (verb) {
        case 'list':
          return renderStatus(servers.status(), servers.problems)
        case 'tools':
          return renderStatus(servers.status(), servers.problems, { tools: true })
        case 'approve':
        case 'reject':
          return answer(verb, arg)
        case 'reconnect': {
          const name = requireName(servers, arg, verb)
          await servers.reconnect(name)
          return renderStatus(
            servers.status().filter((s) => s.name === name),
            [],
          )
        }
        case 'log': {
          const name = requireName(servers, arg, verb)
          const status = servers.status().find((s) => s.name === name)!
          const tail = servers.stderrTail(name, 40)
          const where = status.stderrLog
            ? `stderr of '${name}' (${status.stderrLog}):`
            : `stderr of '${name}':`
          // A server's stderr may hold escape sequences; they are not passed to the terminal.
          const clean = tail.map((line) => printable(line, '?', '\t'))
          return clean.length === 0 ? `${where} nothing written` : `${where}\n${clean.join('\n')}`
        }
        default:
          throw new McpClientError(
            'MCP_COMMAND_INVALID',
            `unknown /mcp subcommand '${verb}'; usage: /mcp ${USAGE}`,
          )
      }
    },
  }
}
