// The `task` tool: the model delegates one piece of work to a named agent.
import { basename } from 'node:path'
import { boundText, elide } from '@keel/base'
import { defineTool, type Tool } from '@keel/tools'
import { z } from 'zod'
import type { AgentCatalog } from './catalog.js'
import { TASK_TOOL } from './compose.js'
import { type AgentDefinition, SubagentError } from './definition.js'

/** The agent a `task` call without `agent` runs. */
export const DEFAULT_AGENT = 'general-purpose'

/** What the model sends. */
export const taskInputSchema = z.strictObject({
  description: z
    .string()
    .trim()
    .min(1)
    .max(120)
    .describe('A short (3-8 word) description of the task, shown to the user'),
  prompt: z
    .string()
    .min(1)
    .max(100_000)
    .describe(
      'The task for the agent, with everything it needs to know: it starts with a fresh context and sees nothing of this conversation',
    ),
  agent: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,63}$/u)
    .optional()
    .describe(`Which agent to run (default ${DEFAULT_AGENT}); see the list in the tool description`),
})

/** A `task` call's input. */
export type TaskInput = z.output<typeof taskInputSchema>

/** Most agents the tool description lists (the rest are callable by name). */
const MAX_AGENTS_LISTED = 50

/** Longest agent description quoted in the tool description. */
const MAX_LISTED = 400

function listed(definition: AgentDefinition): string {
  const text = definition.description.replace(/\s+/gu, ' ')
  return `- ${definition.name}: ${text.length > MAX_LISTED ? `${text.slice(0, MAX_LISTED - 1)}…` : text}`
}

/** The tool's description: how to delegate, and the agents available when the agent was set up. */
export function taskDescription(catalog: AgentCatalog): string {
  const agents = [...catalog.agents.values()]
  return [
    "Delegate a task to a subagent that works on its own in a separate session and returns its final answer as this tool's result.",
    'Use it for searches or work that would take many steps and whose details do not matter here; give the subagent a complete, self-contained prompt (it sees nothing of this conversation).',
    'Several task calls in one message run in parallel; give parallel tasks work that does not overlap (they may edit files at the same time). Do not delegate what you can do in one or two tool calls.',
    '',
    'Agents:',
    ...agents.slice(0, MAX_AGENTS_LISTED).map(listed),
    ...(agents.length > MAX_AGENTS_LISTED
      ? [`… and ${agents.length - MAX_AGENTS_LISTED} more (the user sees them with /agents)`]
      : []),
  ].join('\n')
}

/** Finds the definition a call names, or explains why there is none (an invalid file of that name is named). */
export function pickDefinition(catalog: AgentCatalog, name: string): AgentDefinition {
  const found = catalog.agents.get(name)
  if (found) return found
  const broken = catalog.problems.find((p) => basename(String(p.details.file ?? ''), '.md') === name)
  // the name is the model's: a pasted megabyte is quoted by its ends (and the whole text bounded)
  const known = [...catalog.agents.keys()].join(', ') || '(none)'
  const shown = elide(name)
  throw new SubagentError(
    'AGENT_UNKNOWN',
    boundText(
      `no agent named ${JSON.stringify(shown)}${broken ? ` (a definition file failed: ${broken.message})` : ''}; agents: ${known}`,
    ),
    { agent: shown },
  )
}

/** Builds the `task` tool over a function that runs one call. */
export function createTaskTool(
  catalog: AgentCatalog,
  options: {
    timeoutMs: number
    run(
      input: TaskInput,
      context: Parameters<Tool<TaskInput>['call']>[1],
    ): ReturnType<Tool<TaskInput>['call']>
  },
): Tool<TaskInput> {
  return defineTool<TaskInput>({
    name: TASK_TOOL,
    description: taskDescription(catalog),
    inputSchema: taskInputSchema,
    // The delegation itself changes nothing: every call the child makes is judged in the
    // child's own session, under a policy never wider than this agent's.
    annotations: { readOnly: false, destructive: false, openWorld: false, idempotent: false },
    // Several delegations of one step run together (bounded by the agent and by the plugin).
    isConcurrencySafe: true,
    timeoutMs: options.timeoutMs,
    call: (input, context) => options.run(input, context),
  })
}
