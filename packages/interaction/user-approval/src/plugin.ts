import { homedir } from 'node:os'
import { join } from 'node:path'
import { definePlugin, type PluginDefinition, sessionRulesProjection, type ToolCallInfo } from '@keel/agent'
import type { Session } from '@keel/session'
import { z } from 'zod'
import { registerPolicyCommands } from './commands.js'
import { callEffects, DEFAULT_RUN_POLICY, decide, type PermissionRequest, pathAccess } from './decide.js'
import { approvalPolicySchema, ownedEventTypes, sandboxModeSchema } from './events.generated.js'
import { holdOsSandbox, osSandboxAvailable, osSandboxStatus } from './os-sandbox.js'
import { expandPath, pathFact, realDirectory } from './paths.js'
import { DEFAULT_PROTECTED_SCAN_LIMIT, findProtectedPaths } from './protected.js'
import { isSandboxedShellTool } from './sandbox.js'
import type { ApprovalPolicyService, SandboxLimitsService } from './services.js'
import { effectivePolicy, setApprovalPolicy, setSandboxMode } from './state.js'

/** Credentials a shell command in the OS sandbox may never read (`~` is the home directory). */
export const DEFAULT_DENY_READ: readonly string[] = Object.freeze([
  '~/.ssh',
  '~/.aws',
  '~/.gnupg',
  '~/.config/gcloud',
  '~/.kube',
  '~/.docker',
  '~/.netrc',
  '~/.npmrc',
  '~/.pypirc',
  '~/.git-credentials',
  '~/.keel',
])

/** The approval plugin's config, as a preset holds it. */
export const userApprovalConfigSchema = z.strictObject({
  /** When to ask (default `on_request`); a later `approval/policy` event wins over it. */
  approvalPolicy: approvalPolicySchema.default(DEFAULT_RUN_POLICY.approvalPolicy),
  /** How much a call may touch (default `workspace_write`); a later `sandbox/mode` event wins over it. */
  sandboxMode: sandboxModeSchema.default(DEFAULT_RUN_POLICY.sandboxMode),
  /** Workspace roots besides the agent's working directory (relative ones resolve against it). */
  workspaceRoots: z.array(z.string().min(1)).default([]),
  /** Names protected from writes at any depth under a root (compared case-insensitively). */
  protectedNames: z.array(z.string().min(1)).default(['.git', '.keel']),
  /** Further paths protected from writes (`~` is the home directory). */
  protectedPaths: z.array(z.string().min(1)).default([]),
  /** Domains shell commands may reach through the OS sandbox's proxy; empty: no network. */
  allowedDomains: z.array(z.string().min(1)).default([]),
  /** Paths shell commands in the OS sandbox may not read. */
  denyRead: z.array(z.string().min(1)).default([...DEFAULT_DENY_READ]),
  /** `auto`: use the OS sandbox where it works; `off`: never (shell commands are then asked about). */
  osSandbox: z.enum(['auto', 'off']).default('auto'),
  /**
   * Directories the scan for nested `.git`/`.keel` visits before each sandboxed shell
   * command; past it the command is refused (`SANDBOX_SCAN_LIMIT`) rather than run with a
   * guard that may miss one.
   */
  protectedScanLimit: z.number().int().positive().default(DEFAULT_PROTECTED_SCAN_LIMIT),
})

/** The validated config of the approval plugin. */
export type UserApprovalConfig = z.output<typeof userApprovalConfigSchema>

/** What only code can give the plugin (not a preset's JSON). */
export interface UserApprovalOptions {
  /** The home directory `~` expands to. Default `os.homedir()`. */
  home?: string
}

/** What the plugin resolved at setup. */
interface Workspace {
  roots: string[]
  protectedPaths: string[]
  denyRead: string[]
  /** Shell commands may use the OS sandbox (config `auto`); whether one works is probed on first use. */
  osSandbox: boolean
}

async function resolveWorkspace(config: UserApprovalConfig, cwd: string, home: string): Promise<Workspace> {
  const roots = await Promise.all(
    [cwd, ...config.workspaceRoots].map((root) => realDirectory(expandPath(root, cwd, home))),
  )
  const protectedPaths = await Promise.all(
    config.protectedPaths.map((path) => realDirectory(expandPath(path, cwd, home))),
  )
  const denyRead = config.denyRead.map((path) => expandPath(path, cwd, home))
  return { roots: [...new Set(roots)], protectedPaths, denyRead, osSandbox: config.osSandbox === 'auto' }
}

/** Builds the permission request of one call, resolving every path to its real location. */
export async function permissionRequest(
  info: Pick<ToolCallInfo, 'tool' | 'input' | 'facts'>,
  cwd: string,
  session: Session,
  config: UserApprovalConfig,
  workspace: Omit<Workspace, 'denyRead'>,
): Promise<PermissionRequest> {
  const { tool, facts } = info
  const access = pathAccess(tool.annotations, facts.command)
  const raws = facts.rawPaths ?? facts.resolvedPaths ?? []
  const paths = await Promise.all(raws.map((raw, i) => pathFact(raw, facts.resolvedPaths?.[i], cwd, access)))
  const request: PermissionRequest = {
    toolName: tool.name,
    annotations: tool.annotations,
    paths,
    effects: callEffects(tool.annotations, { paths, command: facts.command }),
    policy: effectivePolicy(session, config),
    workspaceRoots: workspace.roots,
    protectedNames: config.protectedNames,
    protectedPaths: workspace.protectedPaths,
    sessionRules: session.project(sessionRulesProjection),
    osSandbox: workspace.osSandbox && isSandboxedShellTool(tool) && (await osSandboxAvailable()),
  }
  if (facts.command !== undefined) request.command = facts.command
  const check = tool.checkPermissions?.(info.input, facts)
  if (check) request.toolCheck = check
  return request
}

/** The `approval.policy` service of one agent: the configured default overlaid by the log's switches. */
function policyService(session: Session, config: UserApprovalConfig): ApprovalPolicyService {
  const current = () => effectivePolicy(session, config)
  return {
    current,
    setApprovalPolicy: (approvalPolicy) => setApprovalPolicy(session, approvalPolicy),
    setSandboxMode: (sandboxMode) => setSandboxMode(session, sandboxMode),
    subscribe: (listener) =>
      session.subscribe((event) => {
        if (event.type === 'approval/policy' || event.type === 'sandbox/mode') listener(current())
      }),
  }
}

/**
 * The approval plugin: before every tool call it builds the permission request (real paths
 * resolved), runs {@link decide}, and votes: a deny (sandbox limit or `never`) refuses the
 * call with its code; an `ask` goes to the agent's answerer chain with the rule an "allow
 * for this session" would record; an allow lets the call run unless another plugin objects.
 * It provides `approval.policy` (the policy in force; `/policy`, `/sandbox` switch it) and
 * `sandbox.limits` (what {@link sandboxShellTool}-wrapped shell tools run under).
 */
export function userApproval(options: UserApprovalOptions = {}): PluginDefinition<UserApprovalConfig> {
  const home = options.home ?? homedir()
  return definePlugin<UserApprovalConfig>({
    name: '@keel/user-approval',
    config: userApprovalConfigSchema,
    events: ownedEventTypes,
    provides: ['approval.policy', 'sandbox.limits'],
    async setup(ctx) {
      const { session, config, cwd } = ctx
      const workspace = await resolveWorkspace(config, cwd, home)
      const letGo = workspace.osSandbox ? holdOsSandbox() : undefined
      const policy = policyService(session, config)
      const limits: SandboxLimitsService = {
        status: osSandboxStatus,
        async current() {
          const nested = await findProtectedPaths(
            workspace.roots,
            config.protectedNames,
            config.protectedScanLimit,
          )
          return {
            mode: policy.current().sandboxMode,
            writableRoots: workspace.roots,
            denyWrite: [
              ...new Set([
                ...workspace.roots.flatMap((root) => config.protectedNames.map((name) => join(root, name))),
                ...nested,
                ...workspace.protectedPaths,
              ]),
            ],
            denyRead: workspace.denyRead,
            allowedDomains: config.allowedDomains,
          }
        },
      }
      ctx.provide('approval.policy', policy)
      ctx.provide('sandbox.limits', limits)
      registerPolicyCommands(ctx, policy)
      ctx.intercept({
        async beforeTool(info) {
          const decision = decide(await permissionRequest(info, cwd, session, config, workspace))
          if (decision.type === 'deny') {
            return { action: 'deny', reason: decision.reason, errorCode: decision.errorCode }
          }
          if (decision.type === 'ask') return { action: 'ask', reason: decision.reason, rule: decision.rule }
          return { action: 'allow' }
        },
      })
      return async () => {
        await letGo?.()
      }
    },
  })
}

/** The approval plugin with code-level defaults. */
export const userApprovalPlugin: PluginDefinition<UserApprovalConfig> = userApproval()
