import type { Agent } from '@keel/agent'
import { elide } from '@keel/base'
import type { PresetAgent } from '@keel/presets'
import { closest } from '../usage.js'
import type { Feed } from './feed.js'
import { contextReport, costReport } from './usage-report.js'
import { hang } from './wrap.js'

/** What a slash command needs. */
export interface SlashContext {
  readonly agent: Agent
  readonly built: PresetAgent
  /** Aborted when the person presses Ctrl-C while the command runs. */
  readonly signal?: AbortSignal
  /** The UI's state (`/cost`, `/context` read its usage). */
  readonly feed?: Feed
  /** The terminal's width, which `/help` is laid out for (80 when unknown). */
  readonly columns?: number
}

/** The commands the UI itself answers; every other `/name` is a plugin's, from the agent's registry. */
const OWN: ReadonlyArray<readonly [string, string]> = [
  ['/help', 'this list'],
  ['/preset', 'the preset and plugins this session runs with'],
  ['/cost', 'tokens and cost of this session, per model'],
  ['/context', 'how full the context window is, and what fills it'],
  ['/exit', 'leave (Ctrl-D on an empty line does too)'],
]

/** The keys of the input line, as `/help` lists them: one group per line (wrapped between keys). */
const KEYS: ReadonlyArray<readonly string[]> = [
  [
    'Enter sends',
    'Ctrl-J or \\+Enter adds a line',
    '←/→ Home/End Ctrl-A/E move',
    'Alt-B/F or Ctrl-←/→ by word',
  ],
  ['Ctrl-W/U/K delete word/before/after', '↑/↓ history (per project)', 'Tab completes @path and /command'],
  [
    '@path attaches a file',
    '!cmd runs a shell command (approval and sandbox as bash)',
    'Ctrl-O shows the last tool output',
  ],
  ['Esc interrupts a turn', 'Ctrl-C interrupts, twice within 2 s exits', 'Ctrl-D on an empty line exits'],
  [
    'approvals: y allow once',
    'a allow for this session (its scope is shown)',
    'n reject with a reason',
    'Esc rejects',
  ],
]

/** Narrowest layout `/help` makes: below it the terminal wraps what is left. */
const MIN_COLUMNS = 40

/**
 * `/help` laid out for a terminal `columns` wide: each command, its description in a column
 * beside it (under it when the command is wider than that column), wrapped between words
 * and indented to that column; then the keys, wrapped between keys.
 */
export function helpText(rows: ReadonlyArray<readonly [string, string]>, columns: number): string {
  const width = Math.max(MIN_COLUMNS, columns)
  // the column fits the commands narrower than a cap; a wider one has its description under it
  const cap = Math.min(36, Math.floor(width / 2))
  const column = Math.max(0, ...rows.map(([cmd]) => cmd.length + 2).filter((w) => w <= cap)) || cap
  const words = (text: string) => text.split(/ +/u).filter((w) => w !== '')
  const commands = rows.map(([cmd, text]) => {
    const own = hang('', words(cmd), ' ', 4, width)
    if (!own.includes('\n') && own.length < column)
      return hang(own.padEnd(column), words(text), ' ', column, width)
    return `${own}\n${hang(' '.repeat(column), words(text), ' ', column, width)}`
  })
  const keys = KEYS.map((group, i) => hang(i === 0 ? 'keys: ' : '      ', group, ' · ', 8, width))
  return [...commands, ...keys].join('\n')
}

/** Every command name (the UI's and the plugins'), for Tab completion. */
export function slashNames(agent: Agent): string[] {
  return [...OWN.map(([cmd]) => cmd.slice(1)), ...agent.commands().map((c) => c.name)]
}

/** The help text for a terminal `columns` wide: the UI's own commands, then every command the agent's plugins registered. */
export function slashHelp(agent: Agent, columns: number): string {
  const rows: Array<readonly [string, string]> = [
    ...OWN,
    ...agent
      .commands()
      .map((c) => [`/${c.name}${c.usage ? ` ${c.usage}` : ''}`, `${c.description} (${c.plugin})`] as const),
  ]
  return helpText(rows, columns)
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
  if (name === 'help') return slashHelp(ctx.agent, ctx.columns ?? 80)
  if (name === 'preset') return describePreset(ctx)
  if (name === 'cost' && ctx.feed) return costReport(ctx.feed.state.usage)
  if (name === 'context' && ctx.feed) return contextReport(ctx.agent, ctx.feed.state.usage)
  if (!ctx.agent.commands().some((c) => c.name === name)) {
    const near = closest(name, slashNames(ctx.agent))
    return `unknown command /${elide(name)}; ${near ? `did you mean /${near}? (/help lists them)` : '/help lists them'}`
  }
  const answer = await ctx.agent.runCommand(name, args, {
    source: 'user',
    ...(ctx.signal === undefined ? {} : { signal: ctx.signal }),
  })
  return answer ?? `/${name} done`
}
