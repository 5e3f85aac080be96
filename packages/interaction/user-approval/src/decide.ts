import { describeRule, ruleCovers, type SessionRule } from '@keel/agent'
import type { ToolAnnotations, ToolPermissionCheck } from '@keel/tools'
import type { ApprovalPolicy, SandboxMode } from './events.js'
import { foldName } from './protected.js'

/** The rules of this run: when to ask, and how much a call may touch. */
export interface RunPolicy {
  approvalPolicy: ApprovalPolicy
  sandboxMode: SandboxMode
}

/** The default, as Codex ships it: ask only when needed, write only the workspace. */
export const DEFAULT_RUN_POLICY: Readonly<RunPolicy> = Object.freeze({
  approvalPolicy: 'on_request',
  sandboxMode: 'workspace_write',
})

/**
 * Who reached a decision: the tool's annotations, the run policy (sandbox limits
 * included), the tool's own `checkPermissions`, a hook answerer, the user (or their
 * session rule), or a higher-level guardian.
 */
export type PermissionSource = 'annotation' | 'policy' | 'tool_override' | 'hook' | 'user' | 'guardian'

/** The codes a refused call carries to the model, so it can pick its next move. */
export type PermissionErrorCode =
  /**
   * A path lies outside every workspace root (after following symlinks): a write there is
   * never allowed in the limited modes; a read is asked about, and refused under `never`.
   */
  | 'OUTSIDE_WORKSPACE'
  /** The session is read-only; nothing may be written. */
  | 'READ_ONLY_SESSION'
  /** The path is protected (`.git`, `.keel`, or configured); it is never written by tools. */
  | 'PROTECTED_PATH'
  /** The path is malformed (a NUL byte); fix the argument. */
  | 'INVALID_PATH'
  /** The path cannot be judged (too long, a symlink loop); use a plain path. */
  | 'PATH_UNRESOLVABLE'
  /** The approval policy is `never` and this call needs approval; do it another way or stop. */
  | 'APPROVAL_REQUIRED'
  /** Network access is off in this sandbox mode. */
  | 'NETWORK_DISABLED'
  /** No OS sandbox can contain a shell command here and the policy does not ask. */
  | 'SANDBOX_UNAVAILABLE'
  /** The tool refused the call itself (`checkPermissions`). */
  | 'TOOL_REFUSED'
  /** A person said no; the reason says why. */
  | 'USER_REJECTED'
  /** A hook (a `hook` approval answerer, e.g. a PreToolUse hook) said no; the reason says why. */
  | 'HOOK_DENIED'
  /** Approval was needed but nobody can answer here (headless); the call fails closed. */
  | 'APPROVAL_UNAVAILABLE'
  /** The turn was cancelled while the question was open. */
  | 'APPROVAL_CANCELLED'

/** The outcome of the permission check of one tool call. */
export type PermissionDecision =
  | { type: 'allow'; source: PermissionSource; reason: string }
  | {
      type: 'ask'
      source: PermissionSource
      reason: string
      /** What an "allow for this session" answer records (see {@link proposedRule}). */
      rule: SessionRule
    }
  | { type: 'deny'; source: PermissionSource; reason: string; errorCode: PermissionErrorCode | (string & {}) }

/**
 * One path a call touches. `raw` is what the model wrote, `resolved` its absolute form
 * (lexical, against the working directory), `real` the same with every symlink followed as
 * far as the path exists (`null` when it cannot be judged, see `problem`).
 */
export interface PathFact {
  raw: string
  resolved: string
  real: string | null
  access: 'read' | 'write'
  problem?: 'nul-byte' | 'too-long' | 'symlink-loop'
}

/** What a call does, derived from the tool's annotations and the facts of the call. */
export interface CallEffects {
  /** Runs a command line (shell tools). */
  executes: boolean
  /** Reaches the network or other processes (`openWorld`) other than through a command. */
  network: boolean
  /** Changes something it does not name by path or command (no facts). */
  unnamedWrites: boolean
}

/** Everything {@link decide} needs. Build it with real paths already resolved: decide does no I/O. */
export interface PermissionRequest {
  toolName: string
  annotations: ToolAnnotations
  paths: readonly PathFact[]
  command?: string
  effects: CallEffects
  policy: RunPolicy
  /** Real absolute paths of the workspace roots. */
  workspaceRoots: readonly string[]
  /** Names (`.git`, `.keel`) protected at any depth under a root, compared case-insensitively. */
  protectedNames: readonly string[]
  /** Real absolute paths protected beside the names, compared case-insensitively. */
  protectedPaths: readonly string[]
  /** The user's "allow for this session" rules. */
  sessionRules: readonly SessionRule[]
  /** A shell command of this call would run inside an OS sandbox. */
  osSandbox: boolean
  /** The tool's own `checkPermissions` verdict, when it gave one. */
  toolCheck?: ToolPermissionCheck
}

/** Derives what a call does from what the tool is and what the call names. */
export function callEffects(
  annotations: ToolAnnotations,
  facts: { paths: readonly unknown[]; command?: string | undefined },
): CallEffects {
  const executes = facts.command !== undefined
  return {
    executes,
    network: annotations.openWorld && !executes,
    unnamedWrites: !annotations.readOnly && annotations.destructive && !executes && facts.paths.length === 0,
  }
}

/** How a call's paths are accessed: a read-only tool reads, a shell runs in its directory, others write. */
export function pathAccess(annotations: ToolAnnotations, command: string | undefined): 'read' | 'write' {
  return annotations.readOnly || command !== undefined ? 'read' : 'write'
}

/** `child` is `parent` or lies under it (both absolute, normalized). */
export function isWithin(child: string, parent: string): boolean {
  if (child === parent) return true
  const prefix = parent.endsWith('/') ? parent : `${parent}/`
  return child.startsWith(prefix)
}

function isProtected(real: string, request: PermissionRequest): string | undefined {
  const folded = foldName(real)
  for (const path of request.protectedPaths) {
    if (isWithin(folded, foldName(path))) return path
  }
  const names = new Set(request.protectedNames.map(foldName))
  for (const root of request.workspaceRoots) {
    if (!isWithin(real, root)) continue
    const segments = real.slice(root.length).split('/')
    const hit = segments.find((segment) => segment !== '' && names.has(foldName(segment)))
    if (hit !== undefined) return hit
  }
  return undefined
}

function deny(
  source: PermissionSource,
  errorCode: PermissionErrorCode | string,
  reason: string,
): PermissionDecision {
  return { type: 'deny', source, errorCode, reason }
}

/** An `ask`, with the code it turns into when the policy is `never`. */
interface Candidate {
  decision: PermissionDecision
  refusedAs?: PermissionErrorCode
}

function isInside(real: string, request: PermissionRequest): boolean {
  return request.workspaceRoots.some((root) => isWithin(real, root))
}

function via(path: PathFact): string {
  return path.real === path.resolved ? '' : ` (it resolves to ${path.real})`
}

/** The paths a call reads outside every workspace root (none in `danger_full_access`). */
function outsideReads(request: PermissionRequest): PathFact[] {
  if (request.policy.sandboxMode === 'danger_full_access') return []
  return request.paths.filter((p) => p.access === 'read' && p.real !== null && !isInside(p.real, request))
}

/** The deepest directory that holds every one of `paths` (absolute, normalized). */
function commonAncestor(paths: readonly string[]): string {
  let common = paths[0]!.split('/')
  for (const path of paths.slice(1)) {
    const parts = path.split('/')
    let i = 0
    while (i < common.length && i < parts.length && common[i] === parts[i]) i++
    common = common.slice(0, i)
  }
  return common.join('/') || '/'
}

/**
 * What an "allow for this session" answer to a question about this call records: the
 * tool, with the exact command line for a shell call, and — for a read outside the
 * workspace — the path read (or the deepest directory holding all of them), so the rule
 * never reaches further than what the person saw.
 */
export function proposedRule(request: PermissionRequest): SessionRule {
  const rule: SessionRule = { toolName: request.toolName }
  if (request.command !== undefined) rule.command = request.command
  const outside = outsideReads(request)
  if (outside.length > 0) rule.path = commonAncestor(outside.map((p) => p.real!))
  return rule
}

/** The sandbox limits: a deny, or undefined when every path is acceptable. */
function checkLimits(request: PermissionRequest): PermissionDecision | undefined {
  const { sandboxMode } = request.policy
  for (const path of request.paths) {
    if (path.problem === 'nul-byte') {
      return deny('policy', 'INVALID_PATH', `the path ${JSON.stringify(path.raw)} contains a NUL byte`)
    }
  }
  if (sandboxMode === 'danger_full_access') return undefined
  for (const path of request.paths) {
    if (path.real === null) {
      const why = path.problem === 'symlink-loop' ? 'its symlinks loop' : 'it is too long'
      return deny('policy', 'PATH_UNRESOLVABLE', `${path.raw} cannot be judged: ${why}`)
    }
    if (!isInside(path.real, request)) {
      // A read outside is a question for a person (see `outsideReads`); a write is a limit.
      if (path.access === 'read') continue
      return deny(
        'policy',
        'OUTSIDE_WORKSPACE',
        `${path.raw} is outside the workspace${via(path)}; in ${sandboxMode} only paths under ${request.workspaceRoots.join(', ')} may be written`,
      )
    }
    if (path.access === 'write') {
      if (sandboxMode === 'read_only') {
        return deny('policy', 'READ_ONLY_SESSION', `the session is read-only; ${path.raw} cannot be written`)
      }
      const hit = isProtected(path.real, request)
      if (hit !== undefined) {
        return deny('policy', 'PROTECTED_PATH', `${path.raw} is protected (${hit}); tools never write it`)
      }
    }
  }
  if (sandboxMode === 'read_only' && request.effects.unnamedWrites) {
    return deny(
      'policy',
      'READ_ONLY_SESSION',
      `the session is read-only and ${request.toolName} changes things it does not name`,
    )
  }
  return undefined
}

/** A read outside the workspace is a question for a person (refused under `never`), whatever the tool says. */
function outsideCandidate(request: PermissionRequest): Candidate | undefined {
  const outside = outsideReads(request)
  if (outside.length > 0) {
    const first = outside[0]!
    const more = outside.length > 1 ? ` (and ${outside.length - 1} more path(s))` : ''
    return {
      decision: {
        type: 'ask',
        source: 'policy',
        reason: `${request.toolName} reads ${first.raw}${via(first)}${more}, outside the workspace (${request.workspaceRoots.join(', ')})`,
        rule: proposedRule(request),
      },
      refusedAs: 'OUTSIDE_WORKSPACE',
    }
  }
  return undefined
}

/** What the approval policy says about a call already within the sandbox limits. */
function judge(request: PermissionRequest): Candidate {
  const { approvalPolicy, sandboxMode } = request.policy
  const { annotations, effects } = request
  const strict = approvalPolicy === 'strict'
  const full = sandboxMode === 'danger_full_access'
  const ask = (source: PermissionSource, reason: string, refusedAs: PermissionErrorCode): Candidate => ({
    decision: { type: 'ask', source, reason, rule: proposedRule(request) },
    refusedAs,
  })
  const allow = (source: PermissionSource, reason: string): Candidate => ({
    decision: { type: 'allow', source, reason },
  })
  if (effects.executes) {
    if (strict)
      return ask(
        'policy',
        `the strict policy asks before running \`${request.command}\``,
        'APPROVAL_REQUIRED',
      )
    if (full) return allow('policy', 'danger_full_access runs commands without a sandbox')
    if (request.osSandbox) return allow('policy', `the command runs inside an OS sandbox (${sandboxMode})`)
    return ask('policy', `no OS sandbox can contain \`${request.command}\` here`, 'SANDBOX_UNAVAILABLE')
  }
  if (effects.network) {
    if (strict) return ask('annotation', `${request.toolName} reaches the network`, 'APPROVAL_REQUIRED')
    if (full) return allow('policy', 'danger_full_access allows network access')
    return ask(
      'annotation',
      `${request.toolName} reaches the network, which is off in ${sandboxMode}`,
      'NETWORK_DISABLED',
    )
  }
  if (annotations.readOnly) return allow('annotation', `${request.toolName} only reads`)
  if (effects.unnamedWrites) {
    if (strict || !full) {
      return ask('annotation', `${request.toolName} may change things it does not name`, 'APPROVAL_REQUIRED')
    }
    return allow('policy', 'danger_full_access sets no limits')
  }
  if (request.paths.length === 0) {
    // Not destructive and names nothing: it changes only the session's own state (a plan, a note).
    return allow('annotation', `${request.toolName} changes only the session's own state`)
  }
  if (strict) {
    return ask('policy', `the strict policy asks before ${request.toolName} writes`, 'APPROVAL_REQUIRED')
  }
  return allow(
    'policy',
    full ? 'danger_full_access sets no limits' : 'writes inside the workspace are allowed',
  )
}

/**
 * The permission decision for one tool call: a pure function of the request (no I/O, no
 * clock). In order: malformed paths and the sandbox limits (`deny`, source `policy`); the
 * tool's own `checkPermissions` refusing (source `tool_override`); a read outside the
 * workspace roots (`ask`; the tool cannot lift it); the tool's own allow or ask; the
 * approval policy over the annotations and effects. An `ask` is then answered by a matching
 * session rule (`allow`, source `user`), or refused when the policy is `never`.
 */
export function decide(request: PermissionRequest): PermissionDecision {
  const limit = checkLimits(request)
  if (limit) return limit
  let candidate: Candidate
  const check = request.toolCheck
  const outside = outsideCandidate(request)
  if (check?.behavior === 'deny') {
    return deny('tool_override', check.errorCode ?? 'TOOL_REFUSED', check.reason)
  } else if (outside) {
    candidate = outside
  } else if (check?.behavior === 'allow') {
    candidate = { decision: { type: 'allow', source: 'tool_override', reason: check.reason } }
  } else if (check?.behavior === 'ask') {
    candidate = {
      decision: { type: 'ask', source: 'tool_override', reason: check.reason, rule: proposedRule(request) },
      refusedAs: 'APPROVAL_REQUIRED',
    }
  } else {
    candidate = judge(request)
  }
  const { decision } = candidate
  if (decision.type !== 'ask') return decision
  const rule = request.sessionRules.find((r) => ruleCovers(r, decision.rule))
  if (rule)
    return { type: 'allow', source: 'user', reason: `allowed for this session (${describeRule(rule)})` }
  if (request.policy.approvalPolicy === 'never') {
    return deny(
      'policy',
      candidate.refusedAs ?? 'APPROVAL_REQUIRED',
      `${decision.reason}; the approval policy is never, so it is refused`,
    )
  }
  return decision
}
