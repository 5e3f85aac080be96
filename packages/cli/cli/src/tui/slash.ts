import type { Agent } from '@keel/agent'
import type { PresetAgent } from '@keel/presets'

/** What a slash command needs. */
export interface SlashContext {
  readonly agent: Agent
  readonly built: PresetAgent
  /** Aborted when the person presses Ctrl-C while the command runs. */
  readonly signal?: AbortSignal
}

/** The commands the UI itself answers; every other `/name` is a plugin's, from the agent's registry. */
const OWN: ReadonlyArray<readonly [string, string]> = [
  ['/help', 'this list'],
  ['/preset', 'the preset and plugins this session runs with'],
  ['/exit', 'leave (Ctrl-D on an empty line does too)'],
]

/** The help text: the UI's own commands, then every command the agent's plugins registered. */
export function slashHelp(agent: Agent): string {
  const rows: Array<readonly [string, string]> = [
    ...OWN,
    ...agent
      .commands()
      .map((c) => [`/${c.name}${c.usage ? ` ${c.usage}` : ''}`, `${c.description} (${c.plugin})`] as const),
  ]
  const width = Math.min(48, Math.max(...rows.map(([cmd]) => cmd.length)) + 2)
  return rows.map(([cmd, text]) => `${cmd.padEnd(width)} ${text}`).join('\n')
}

function describePreset(ctx: SlashContext): string {
  const c = ctx.built.composition
  const plugins = c.plugins.map((p) => `  ${p.name}@${p.version} ${p.configDigest.slice(0, 19)}`).join('\n')
  return `preset ${c.preset} (tools: ${c.tools.join(', ') || 'none'})\n${plugins || '  no plugins'}\nA blank session switches with: keel resume ${ctx.agent.session.id} --preset <id>`
}

/**
 * Runs one slash command line; returns the text to show. `/help`, `/preset` and `/exit`
 * are the UI's; any other name runs the plugin command of that name through the agent's
 * command registry (logged as `command/run` / `command/done`); an unknown name says so.
 */
export async function runSlash(line: string, ctx: SlashContext): Promise<string> {
  const trimmed = line.trim()
  const space = trimmed.search(/\s/u)
  const name = (space < 0 ? trimmed : trimmed.slice(0, space)).slice(1)
  const args = space < 0 ? '' : trimmed.slice(space + 1).trim()
  if (name === 'help') return slashHelp(ctx.agent)
  if (name === 'preset') return describePreset(ctx)
  if (!ctx.agent.commands().some((c) => c.name === name)) {
    return `unknown command /${name}; /help lists them`
  }
  const answer = await ctx.agent.runCommand(name, args, {
    source: 'user',
    ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
  })
  return answer ?? `/${name} done`
}
