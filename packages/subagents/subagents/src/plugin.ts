import { homedir } from 'node:os'
import { join } from 'node:path'
import { type ChildSessions, definePlugin, type PluginContext, type PluginDefinition } from '@keel/agent'
import { errorMessage } from '@keel/base'
import type { Session } from '@keel/session'
import type {} from '@keel/user-approval'
import { z } from 'zod'
import { definitionRoots, describeCatalog, loadAgentCatalog } from './catalog.js'
import { runChild } from './child.js'
import { type AgentDefinition, SubagentError } from './definition.js'
import { ownedEventTypes } from './events.generated.js'
import { createTaskTool, DEFAULT_AGENT, pickDefinition } from './task-tool.js'
import { NO_USAGE, stepsOf, usageTotalsProjection } from './usage.js'

/** The plugin's name. */
export const SUBAGENTS_PLUGIN = '@keel/subagents'

/** The plugin's config, as a preset holds it. */
export const subagentsConfigSchema = z.strictObject({
  /** Children of one agent running at once; further `task` calls wait for a free slot. */
  maxConcurrent: z.number().int().min(1).max(32).default(4),
  /**
   * Delegation levels below a top-level session: 1 (the default) lets the top-level agent
   * delegate and its children not; 2 lets children delegate once more.
   */
  maxDepth: z.number().int().min(1).max(5).default(1),
  /** A `task` call's deadline in ms (the child is aborted then, `TOOL_TIMEOUT`). Default 30 minutes. */
  timeoutMs: z
    .number()
    .int()
    .positive()
    .default(30 * 60_000),
  /** The home directory for `~/.claude/agents` (default: the user's). */
  home: z.string().min(1).optional(),
  /** Keel's home, for `<keelHome>/agents` (default `$KEEL_HOME`, else `~/.keel`). */
  keelHome: z.string().min(1).optional(),
})

/** The validated config. */
export type SubagentsConfig = z.output<typeof subagentsConfigSchema>

/** What only code can give the plugin. */
export interface SubagentsOptions {
  /** The agents Keel ships (lowest precedence). Default {@link shippedDefinitions}. */
  shipped?: readonly AgentDefinition[]
}

/** A counter of free slots; `acquire` waits for one (or rejects when `signal` fires first). */
function slots(limit: number) {
  let free = limit
  const waiting: Array<() => void> = []
  return {
    async acquire(signal: AbortSignal): Promise<() => void> {
      if (free === 0) {
        await new Promise<void>((resolve, reject) => {
          const wake = () => {
            signal.removeEventListener('abort', onAbort)
            resolve()
          }
          const onAbort = () => {
            waiting.splice(waiting.indexOf(wake), 1)
            reject(new SubagentError('SUBAGENT_LIMIT', 'cancelled while waiting for a free subagent slot'))
          }
          signal.addEventListener('abort', onAbort, { once: true })
          waiting.push(wake)
        })
      } else free--
      let released = false
      return () => {
        if (released) return
        released = true
        const next = waiting.shift()
        if (next) next()
        else free++
      }
    },
  }
}

/** The `task` calls of `session` whose child never reported its end (the process stopped while it ran). */
function unsettledSpawns(session: Session) {
  const settled = new Set<string>()
  for (const event of session.events) if (event.type === 'subagent/settled') settled.add(event.data.callId)
  return session.events.flatMap((event) =>
    event.type === 'subagent/spawned' && !settled.has(event.data.callId) ? [event.data] : [],
  )
}

/**
 * On resume: each child that was running when the process stopped gets its
 * `subagent/settled` (`interrupted`, with the usage its log shows), and the model is told
 * where that child's log is. Its `task` call already has its `TOOL_INTERRUPTED` result.
 */
async function settleInterrupted(
  ctx: PluginContext<SubagentsConfig>,
  sessions: ChildSessions,
): Promise<string | undefined> {
  const lines: string[] = []
  for (const spawn of unsettledSpawns(ctx.session)) {
    let usage = NO_USAGE
    let steps = 0
    let problem = ''
    try {
      const child = await sessions.load(spawn.child)
      usage = child.project(usageTotalsProjection)
      steps = stepsOf(child)
    } catch (error) {
      problem = ` (its log cannot be read: ${errorMessage(error)})`
    }
    ctx.session.append('subagent/settled', {
      callId: spawn.callId,
      child: spawn.child,
      outcome: 'interrupted',
      usage,
      steps,
      error: {
        code: 'SUBAGENT_INTERRUPTED',
        message: `the process stopped while the subagent ran${problem}`,
      },
    })
    lines.push(
      `- subagent ${spawn.agent} ("${spawn.description}", call ${spawn.callId} in turn ${spawn.turn}) was interrupted after ${steps} step(s); its session ${spawn.child} keeps what it did${problem}`,
    )
  }
  if (lines.length === 0) return undefined
  return `Keel stopped while subagents ran; their task calls were answered TOOL_INTERRUPTED:\n${lines.join('\n')}\nRun a task again if you still need its result.`
}

/**
 * Delegation to child agents. Registers the `task` tool (when the embedder lent
 * `sessions` and this session is not already at `maxDepth`) and the `/agents` command;
 * reads agent definitions afresh for every call (project > user > shipped), so an edited
 * file applies to the next delegation; on resume settles children the process left running.
 */
export function subagents(options: SubagentsOptions = {}): PluginDefinition<SubagentsConfig> {
  return definePlugin<SubagentsConfig>({
    name: SUBAGENTS_PLUGIN,
    config: subagentsConfigSchema,
    events: ownedEventTypes,
    optional: ['approval.policy'],
    async setup(ctx) {
      const home = ctx.config.home ?? homedir()
      const keelHome = ctx.config.keelHome ?? (process.env.KEEL_HOME || join(home, '.keel'))
      const roots = definitionRoots({ cwd: ctx.cwd, keelHome, home })
      const load = () => loadAgentCatalog(roots, options.shipped)
      const catalog = await load()
      for (const problem of catalog.problems) ctx.display('subagents', `ignored: ${problem.message}`)
      ctx.registerCommand('agents', {
        description: 'the agents the task tool can run, and definition files that failed',
        run: async () => describeCatalog(await load()),
      })
      const sessions = ctx.sessions
      if (!sessions) {
        ctx.display(
          'subagents',
          'the task tool is off: this agent was built without a store for child sessions',
        )
        return
      }
      ctx.intercept({
        sessionStart: async ({ source }) => {
          if (source !== 'resume') return { action: 'continue' }
          const context = await settleInterrupted(ctx, sessions)
          return context === undefined ? { action: 'continue' } : { action: 'continue', context }
        },
      })
      const depth = ctx.session.header.delegatedBy?.depth ?? 0
      if (depth >= ctx.config.maxDepth) return
      const composition = sessions.composition
      const limit = slots(ctx.config.maxConcurrent)
      ctx.registerTool(
        createTaskTool(catalog, {
          timeoutMs: ctx.config.timeoutMs,
          async run(input, context) {
            if (!composition) {
              throw new SubagentError(
                'SUBAGENTS_UNAVAILABLE',
                'this agent records no composition for a child to inherit (build it from a preset)',
              )
            }
            const definition = pickDefinition(await load(), input.agent ?? DEFAULT_AGENT)
            const release = await limit.acquire(context.signal)
            try {
              return await runChild(
                {
                  ctx: ctx as PluginContext<unknown>,
                  sessions,
                  composition,
                  policy: ctx.useOptional('approval.policy'),
                },
                {
                  definition,
                  description: input.description,
                  prompt: input.prompt,
                  depth: depth + 1,
                  mayDelegate: depth + 1 < ctx.config.maxDepth,
                  callId: context.callId,
                  signal: context.signal,
                  progress: (message) => context.progress({ message }),
                },
              )
            } finally {
              release()
            }
          },
        }),
      )
    },
  })
}

/** The plugin with code-level defaults. */
export const subagentsPlugin: PluginDefinition<SubagentsConfig> = subagents()
