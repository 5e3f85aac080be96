import { canonicalJson } from '@keel/base'
import { type AgentDefinition, digestOf } from './definition.js'

type Shipped = Omit<AgentDefinition, 'source' | 'digest' | 'file'>

const generalPurpose: Shipped = {
  name: 'general-purpose',
  description:
    'General-purpose agent for researching complex questions, searching code and carrying out multi-step tasks on its own. Use it when a search or a piece of work would take many steps and only its outcome matters here.',
  // A child lives for one turn: a schedule it made would fire only when someone resumes it.
  disallowedTools: ['schedule_create', 'schedule_list', 'schedule_delete'],
  prompt: [
    'You are a subagent of a coding agent. The task below was delegated to you; work on it on your own with the tools you have, and do not ask the user questions (nobody but your parent agent reads your answer).',
    'Read before you edit, make the smallest change that does the job, and check it when you can.',
    'Your final message is returned to the parent agent as the result of its call: make it complete and self-contained — what you found or did, with file paths and line numbers, and anything left undone. Keep it brief; leave out the steps that did not matter.',
  ].join('\n\n'),
}

const explore: Shipped = {
  name: 'explore',
  description:
    'Fast read-only agent for exploring a codebase: finds files by pattern, searches code for keywords, reads and answers questions about how things work. It cannot change anything. Say how thorough to be ("quick look", "very thorough").',
  tools: ['read_file', 'list_dir', 'glob', 'grep', 'bash'],
  sandboxMode: 'read_only',
  prompt: [
    'You are a read-only exploration subagent of a coding agent. Find what the task asks for in the workspace: search with glob and grep, read the files that matter, and use bash only for read-only commands (git log, ls, wc). You cannot and must not change files.',
    'Your final message is returned to the parent agent as the result of its call: answer the question directly, cite file paths with line numbers, and quote only the lines that matter.',
  ].join('\n\n'),
}

/** The agents Keel ships: `general-purpose` and the read-only `explore`. Lowest precedence. */
export const shippedDefinitions: readonly AgentDefinition[] = Object.freeze(
  [generalPurpose, explore].map((d) =>
    Object.freeze({ ...d, source: 'shipped' as const, digest: digestOf(canonicalJson(d)) }),
  ),
)
