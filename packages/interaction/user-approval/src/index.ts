import './events.js'
import './services.js'

export {
  type CallEffects,
  callEffects,
  DEFAULT_RUN_POLICY,
  decide,
  isWithin,
  type PathFact,
  type PermissionDecision,
  type PermissionErrorCode,
  type PermissionRequest,
  type PermissionSource,
  pathAccess,
  proposedRule,
  type RunPolicy,
} from './decide.js'
export {
  approvalPolicySchema,
  ownedEventTypes as approvalEventTypes,
  sandboxModeSchema,
} from './events.generated.js'
export type { ApprovalPolicy, SandboxMode } from './events.js'
export {
  type CommandLimits,
  holdOsSandbox,
  type OsSandboxStatus,
  osSandboxAvailable,
  osSandboxStatus,
  SandboxError,
  type SandboxErrorCode,
  wrapCommand,
} from './os-sandbox.js'
export { expandPath, pathFact, realLocation } from './paths.js'
export {
  DEFAULT_DENY_READ,
  permissionRequest,
  type UserApprovalConfig,
  type UserApprovalOptions,
  userApproval,
  userApprovalConfigSchema,
  userApprovalPlugin,
} from './plugin.js'
export { DEFAULT_PROTECTED_SCAN_LIMIT, findProtectedPaths, foldName } from './protected.js'
export { isSandboxedShellTool, sandboxShellTool } from './sandbox.js'
export type { ApprovalPolicyService, SandboxLimitsService } from './services.js'
export {
  effectivePolicy,
  type RecordedPolicy,
  recordedPolicyProjection,
  setApprovalPolicy,
  setSandboxMode,
} from './state.js'
