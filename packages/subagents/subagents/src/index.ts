import './events.js'

export {
  type AgentCatalog,
  type DefinitionRoot,
  definitionRoots,
  describeCatalog,
  loadAgentCatalog,
} from './catalog.js'
export { childSystemPrompt } from './child.js'
export { childComposition, childTools, TASK_TOOL } from './compose.js'
export {
  type AgentDefinition,
  CLAUDE_TOOL_NAMES,
  MAX_DEFINITION_BYTES,
  type PermissionMode,
  parseDefinition,
  SubagentError,
  type SubagentErrorCode,
} from './definition.js'
export { ownedEventTypes as subagentEventTypes } from './events.generated.js'
export type { AgentDefinitionSource, SubagentOutcome } from './events.js'
export {
  SUBAGENTS_PLUGIN,
  type SubagentsConfig,
  type SubagentsOptions,
  subagents,
  subagentsConfigSchema,
  subagentsPlugin,
} from './plugin.js'
export { childPolicy, requestedPolicy } from './policy.js'
export { shippedDefinitions } from './shipped.js'
export {
  createTaskTool,
  DEFAULT_AGENT,
  pickDefinition,
  type TaskInput,
  taskDescription,
  taskInputSchema,
} from './task-tool.js'
export { addUsage, NO_USAGE, stepsOf, usageTotalsProjection } from './usage.js'
