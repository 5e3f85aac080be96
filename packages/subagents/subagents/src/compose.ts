// The child's composition: the parent's, with the definition's tools and model, recorded in
// the child's header so the child resumes on its own exactly as it ran.
import type { AgentComposition } from '@keel/session'
import type { AgentDefinition } from './definition.js'

/** The name of the delegation tool (a child that may not delegate never gets it). */
export const TASK_TOOL = 'task'

/** `names` with each `mcp__<server>` prefix expanded to that server's tools among `available`. */
function expand(names: readonly string[], available: readonly string[]): string[] {
  const out = new Set<string>()
  for (const name of names) {
    if (name.startsWith('mcp__') && name.length > 5 && !name.slice(5).includes('__')) {
      for (const tool of available) if (tool.startsWith(`${name}__`)) out.add(tool)
    }
    out.add(name)
  }
  return [...out]
}

/**
 * The tools a child of `definition` is offered, in the parent's order: the definition's
 * `tools` (all of the parent's when absent) less its `disallowedTools`, and without the
 * `task` tool unless the child may delegate in turn. Names the parent does not have are
 * dropped (a child never gets a tool its parent lacks).
 */
export function childTools(
  definition: Pick<AgentDefinition, 'tools' | 'disallowedTools'>,
  parentTools: readonly string[],
  mayDelegate: boolean,
): string[] {
  const allowed = definition.tools ? new Set(expand(definition.tools, parentTools)) : undefined
  const denied = new Set(expand(definition.disallowedTools ?? [], parentTools))
  if (!mayDelegate) denied.add(TASK_TOOL)
  return parentTools.filter((name) => (allowed === undefined || allowed.has(name)) && !denied.has(name))
}

/**
 * The composition a child records: the parent's plugins and tool groups (the plugin that
 * delegates, `plugin`, only when the child may delegate in turn), the child's model, and a
 * `toolFilter` of exactly `tools`.
 */
export function childComposition(
  parent: AgentComposition,
  options: { plugin: string; mayDelegate: boolean; model: string | undefined; tools: readonly string[] },
): AgentComposition {
  const { model: _parentModel, toolFilter: _parentFilter, ...rest } = parent
  return {
    ...rest,
    plugins: options.mayDelegate ? parent.plugins : parent.plugins.filter((p) => p.name !== options.plugin),
    ...(options.model === undefined ? {} : { model: options.model }),
    toolFilter: { only: [...options.tools] },
  }
}
