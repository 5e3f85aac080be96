import './events.js'
import './services.js'

export { type Gate, gateOf, type ProjectApprovals, projectApprovalsProjection } from './approval.js'
export {
  type ConfigProblem,
  type ConfiguredServer,
  collectServers,
  projectFile,
  readServerFile,
  SERVER_NAME_PATTERN,
  type ServerEntry,
  type ServerScope,
  serverEntrySchema,
  serverMapSchema,
  userFile,
} from './config.js'
export { type McpToolHints, toKeelAnnotations, toToolOutput } from './content.js'
export { McpClientError, type McpErrorCode } from './errors.js'
export { ownedEventTypes as mcpEventTypes } from './events.generated.js'
export type {
  McpApprovalDecision,
  McpServerRecord,
  McpServerScope,
  McpServerState,
} from './events.js'
export { type Expanded, expandText } from './expand.js'
export { type ListMcpServersOptions, listMcpServers } from './list.js'
export { qualifiedToolName } from './names.js'
export {
  defaultKeelHome,
  type McpConfig,
  type McpPluginOptions,
  mcpConfigSchema,
  mcpPlugin,
} from './plugin.js'
export { renderProblem, renderStatus } from './render.js'
export { jsonSchemaInput } from './schema.js'
export type { McpServerStatus } from './servers.js'
export type { McpServersService } from './services.js'
export { BoundedLog } from './stderr-log.js'
