import { resolve } from 'node:path'
import { listMcpServers, mcpConfigSchema, renderStatus } from '@keel/mcp'
import { findPreset, loadPresets } from '@keel/presets'
import { keelHome } from '@keel/store-jsonl'
import type { CliIo } from './io.js'
import { pluginSearch } from './plugin-search.js'
import { parseFlags, UsageError } from './usage.js'

const USAGE = 'usage: keel mcp list [--preset id] [--project] [--tools] [--cwd dir]'

/**
 * `keel mcp list`: every MCP server the preset (default `coding`), `$KEEL_HOME/mcp.json`
 * and the project's `.mcp.json` configure, each started once to report its state and
 * tools. Project servers are started only with `--project` (starting one runs the
 * repository's code); otherwise they are listed as needing approval.
 */
export async function mcpCommand(argv: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv
  if (sub !== 'list') throw new UsageError(USAGE)
  const { values, positionals } = parseFlags('keel mcp list', rest, {
    preset: { type: 'string' },
    project: { type: 'boolean' },
    tools: { type: 'boolean' },
    cwd: { type: 'string' },
  })
  if (positionals.length > 0) throw new UsageError(USAGE)
  const cwd = resolve(values.cwd ?? io.cwd ?? process.cwd())
  const home = keelHome(io.env as NodeJS.ProcessEnv)
  const { preset } = findPreset(await loadPresets(pluginSearch(home, cwd)), values.preset ?? 'coding')
  const ref = preset.plugins.find((p) => p.use === '@keel/mcp')
  const config = mcpConfigSchema.parse(ref?.config ?? {})
  const { servers, problems } = await listMcpServers({
    projectDir: cwd,
    keelHome: home,
    env: io.env as NodeJS.ProcessEnv,
    preset: config.mcpServers,
    projectServers: config.projectServers,
    userServers: config.userServers,
    includeProject: values.project === true,
  })
  io.out(
    `${renderStatus(servers, problems, {
      tools: values.tools === true,
      approvalHint:
        "project servers were not started (that runs the repository's code): keel mcp list --project starts them; in a session, /mcp approve <name>",
    })}\n`,
  )
  if (ref === undefined)
    io.out(`(preset ${preset.id} does not use @keel/mcp: its sessions run no MCP server)\n`)
  return 0
}
