import './events.js'

export {
  type ApprovalAnswer,
  type ApprovalAnswerer,
  type ApprovalQuestion,
  approvalAnswerers,
  fromToolAnswerer,
  isApprovalActive,
  registerApprovalAnswerer,
} from './answerers.js'
export { answerCall, consultHooks, type HookAsks, ruleFor, type Settlement, settle } from './ask.js'
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
  approvalAnswerSourceSchema,
  approvalOutcomeSchema,
  approvalPolicySchema,
  ownedEventTypes as approvalEventTypes,
  sandboxModeSchema,
  sessionRuleSchema,
} from './events.generated.js'
export type {
  ApprovalAnswerSource,
  ApprovalOutcome,
  ApprovalPolicy,
  SandboxMode,
  SessionRule,
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
  activePolicy,
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
