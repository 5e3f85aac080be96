import './events.js'

export {
  type ApprovalAnswer,
  type ApprovalAnswerer,
  type ApprovalQuestion,
  approvalAnswerers,
  fromToolAnswerer,
  registerApprovalAnswerer,
} from './answerers.js'
export { ruleFor, type Settlement, settle } from './ask.js'
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
  type RunPolicy,
} from './decide.js'
export {
  type ApprovalAnswerSource,
  type ApprovalOutcome,
  type ApprovalPolicy,
  approvalAnswerSourceSchema,
  approvalOutcomeSchema,
  approvalPolicySchema,
  type SandboxMode,
  type SessionRule,
  sandboxModeSchema,
  sessionRuleSchema,
} from './events.js'
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
export {
  type CommandLimits,
  holdOsSandbox,
  isSandboxedShellTool,
  type OsSandboxStatus,
  osSandboxAvailable,
  osSandboxStatus,
  SandboxError,
  type SandboxErrorCode,
  sandboxShellTool,
  wrapCommand,
} from './sandbox.js'
export {
  effectivePolicy,
  type RecordedPolicy,
  recordedPolicyProjection,
  sessionRulesProjection,
  setApprovalPolicy,
  setSandboxMode,
} from './state.js'
export {
  createTerminalAnswerer,
  parseAnswer,
  renderQuestion,
  type TerminalAnswererOptions,
} from './terminal.js'
