import { homedir } from 'node:os'
import { join } from 'node:path'
import { type BeforeToolDecision, definePlugin, type PluginDefinition, type ToolCallInfo } from '@keel/agent'
import type { Session } from '@keel/session'
import { z } from 'zod'
import {
  type ApprovalAnswerer,
  type ApprovalQuestion,
  approvalAnswerers,
  registerApprovalAnswerer,
} from './answerers.js'
import { type Settlement, settle } from './ask.js'
import { callEffects, DEFAULT_RUN_POLICY, decide, type PermissionRequest, pathAccess } from './decide.js'
import { approvalPolicySchema, sandboxModeSchema } from './events.js'
import { expandPath, pathFact, realDirectory } from './paths.js'
import { holdOsSandbox, isSandboxedShellTool, osSandboxAvailable, publishCommandLimits } from './sandbox.js'
import { effectivePolicy, sessionRulesProjection } from './state.js'

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
})

/** The validated config of the approval plugin. */
export type UserApprovalConfig = z.output<typeof userApprovalConfigSchema>

/** What only code can give the plugin (not a preset's JSON). */
export interface UserApprovalOptions {
  /** Answerers registered for every session the plugin runs on (a terminal, a UI). */
  answerers?: readonly ApprovalAnswerer[]
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

function verdict(settlement: Settlement, reason: string): BeforeToolDecision {
  switch (settlement.outcome) {
    case 'allowed-once':
    case 'allowed-session':
      return { action: 'allow' }
    case 'rejected':
      return {
        action: 'deny',
        errorCode: 'USER_REJECTED',
        reason: `${reason}; rejected: ${settlement.reason}`,
      }
    case 'cancelled':
      return { action: 'deny', errorCode: 'APPROVAL_CANCELLED', reason: `${reason}; the turn was cancelled` }
    default:
      return {
        action: 'deny',
        errorCode: 'APPROVAL_UNAVAILABLE',
        reason: `${reason}; approval was needed but nobody can answer here, so the call fails closed`,
      }
  }
}

/**
 * The approval plugin: before every tool call it builds the permission request (real
 * paths resolved), runs {@link decide}, and turns `ask` into one `approval/asked` and one
 * `approval/decided` (hook answerers, session rules, interactive answerers, then fail
 * closed). Denials reach the model as error results with their code. It also publishes
 * the sandbox limits that {@link sandboxShellTool}-wrapped shell tools run under.
 */
export function userApproval(options: UserApprovalOptions = {}): PluginDefinition<UserApprovalConfig> {
  const home = options.home ?? homedir()
  return definePlugin<UserApprovalConfig>({
    name: '@keel/user-approval',
    config: userApprovalConfigSchema,
    events: ['approval/asked', 'approval/decided', 'approval/policy', 'sandbox/mode'],
    async setup(ctx) {
      const { session, config, cwd } = ctx
      const workspace = await resolveWorkspace(config, cwd, home)
      const letGo = workspace.osSandbox ? holdOsSandbox() : undefined
      const unregister = (options.answerers ?? []).map((answerer) =>
        registerApprovalAnswerer(session, answerer),
      )
      const unpublish = publishCommandLimits(session, () => ({
        mode: effectivePolicy(session, config).sandboxMode,
        writableRoots: workspace.roots,
        denyWrite: [
          ...workspace.roots.flatMap((root) => config.protectedNames.map((name) => join(root, name))),
          ...workspace.protectedPaths,
        ],
        denyRead: workspace.denyRead,
        allowedDomains: config.allowedDomains,
      }))
      ctx.intercept({
        async beforeTool(info) {
          const request = await permissionRequest(info, cwd, session, config, workspace)
          const decision = decide(request)
          if (decision.type === 'allow') return { action: 'allow' }
          if (decision.type === 'deny') {
            return { action: 'deny', reason: decision.reason, errorCode: decision.errorCode }
          }
          const open = session.openTurn
          if (!open) throw new Error(`cannot ask about ${info.call.name} outside a turn`)
          const id = `${open.turn}:${info.call.id}`
          session.append('approval/asked', {
            id,
            turn: open.turn,
            toolName: info.tool.name,
            callId: info.call.id,
            reason: decision.reason,
          })
          const question: ApprovalQuestion = {
            id,
            turn: open.turn,
            toolName: info.tool.name,
            callId: info.call.id,
            reason: decision.reason,
            input: info.input,
            info,
            request,
            signal: info.signal ?? new AbortController().signal,
          }
          let settlement: Settlement
          try {
            settlement = await settle(question, approvalAnswerers(session), () =>
              session.project(sessionRulesProjection),
            )
          } catch (error) {
            settlement = {
              outcome: 'rejected',
              by: 'none',
              reason: `asking failed: ${error instanceof Error ? error.message : String(error)}`,
            }
          }
          session.append('approval/decided', { id, turn: open.turn, ...settlement })
          return verdict(settlement, decision.reason)
        },
      })
      return async () => {
        unpublish()
        for (const undo of unregister) undo()
        await letGo?.()
      }
    },
  })
}

/** The approval plugin with code-level defaults (no answerers registered up front). */
export const userApprovalPlugin: PluginDefinition<UserApprovalConfig> = userApproval()
