import type { Agent } from '@keel/agent'
import type { PresetAgent } from '@keel/presets'
import { renderTodoList, todoProjection } from '@keel/todo'
import {
  type ApprovalPolicy,
  approvalPolicySchema,
  recordedPolicyProjection,
  type SandboxMode,
  sandboxModeSchema,
  setApprovalPolicy,
  setSandboxMode,
} from '@keel/user-approval'

/** What a slash command needs. */
export interface SlashContext {
  readonly agent: Agent
  readonly built: PresetAgent
}

/** The slash commands and their one-line help. */
export const SLASH_HELP: ReadonlyArray<[string, string]> = [
  ['/help', 'this list'],
  ['/todo', 'the todo list as the log has it'],
  ['/compact [focus]', 'compact the conversation now (the compaction plugin)'],
  ['/preset', 'the preset and plugins this session runs with'],
  ['/policy [strict|on_request|never]', 'show or set the approval policy (recorded in the log)'],
  [
    '/sandbox [read_only|workspace_write|danger_full_access]',
    'show or set the sandbox mode (recorded in the log)',
  ],
  ['/exit', 'leave (Ctrl-D on an empty line does too)'],
]

const APPROVAL = '@keel/user-approval'

function approvalConfig(built: PresetAgent): Record<string, unknown> | undefined {
  const entry = built.composition.plugins.find((p) => p.name === APPROVAL)
  if (!entry) return undefined
  return typeof entry.config === 'object' && entry.config !== null
    ? (entry.config as Record<string, unknown>)
    : {}
}

function currentPolicy(ctx: SlashContext): { approvalPolicy: string; sandboxMode: string } {
  const config = approvalConfig(ctx.built) ?? {}
  const recorded = ctx.agent.session.project(recordedPolicyProjection) as {
    approvalPolicy?: string
    sandboxMode?: string
  }
  return {
    approvalPolicy: recorded.approvalPolicy ?? (config.approvalPolicy as string | undefined) ?? 'on_request',
    sandboxMode: recorded.sandboxMode ?? (config.sandboxMode as string | undefined) ?? 'workspace_write',
  }
}

/** Runs the compaction plugin's `compact` command through the agent's command registry. */
async function compact(ctx: SlashContext, args: string): Promise<string> {
  if (!ctx.agent.commands().some((c) => c.name === 'compact'))
    return 'this preset has no compaction plugin (try keel --preset coding)'
  return String(await ctx.agent.runCommand('compact', args))
}

/** Runs one slash command line; returns the text to show. Unknown commands say so. */
export async function runSlash(line: string, ctx: SlashContext): Promise<string> {
  const [name = '', ...rest] = line.trim().split(/\s+/u)
  const args = rest.join(' ')
  switch (name) {
    case '/help':
      return SLASH_HELP.map(([cmd, text]) => `${cmd.padEnd(58)} ${text}`).join('\n')
    case '/todo': {
      const todos = ctx.agent.session.project(todoProjection)
      return todos.length === 0 ? 'no todo list yet' : renderTodoList(todos)
    }
    case '/compact':
      return compact(ctx, args)
    case '/preset': {
      const c = ctx.built.composition
      const plugins = c.plugins
        .map((p) => `  ${p.name}@${p.version} ${p.configDigest.slice(0, 19)}`)
        .join('\n')
      return `preset ${c.preset} (tools: ${c.tools.join(', ') || 'none'})\n${plugins || '  no plugins'}\nA blank session switches with: keel resume ${ctx.agent.session.id} --preset <id>`
    }
    case '/policy':
    case '/sandbox': {
      if (!approvalConfig(ctx.built))
        return `this preset has no approval plugin, so there is no ${name.slice(1)} to set`
      if (args === '') {
        const p = currentPolicy(ctx)
        return `approval policy ${p.approvalPolicy}, sandbox mode ${p.sandboxMode}`
      }
      if (name === '/policy') {
        const parsed = approvalPolicySchema.safeParse(args)
        if (!parsed.success) return `unknown policy ${args}: use strict, on_request or never`
        setApprovalPolicy(ctx.agent.session, parsed.data as ApprovalPolicy)
        return `approval policy set to ${parsed.data}`
      }
      const parsed = sandboxModeSchema.safeParse(args)
      if (!parsed.success)
        return `unknown sandbox mode ${args}: use read_only, workspace_write or danger_full_access`
      setSandboxMode(ctx.agent.session, parsed.data as SandboxMode)
      return `sandbox mode set to ${parsed.data}`
    }
    default:
      return `unknown command ${name}; /help lists them`
  }
}
