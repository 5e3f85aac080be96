import type { ToolAnnotations } from '@keel/tools'
import { describe, expect, it } from 'vitest'
import {
  type ApprovalPolicy,
  callEffects,
  decide,
  type PathFact,
  type PermissionDecision,
  type PermissionRequest,
  pathAccess,
  type SandboxMode,
} from '../src/index.js'

const ROOT = '/work/ws'
const policies: ApprovalPolicy[] = ['strict', 'on_request', 'never']
const modes: SandboxMode[] = ['read_only', 'workspace_write', 'danger_full_access']

function annotations(readOnly: boolean, destructive: boolean, openWorld: boolean, idempotent = true) {
  return { readOnly, destructive, openWorld, idempotent }
}

/** A request for one call; `paths` are real paths (access derived from the annotations). */
function request(
  a: ToolAnnotations,
  policy: [ApprovalPolicy, SandboxMode],
  facts: { paths?: string[]; command?: string; osSandbox?: boolean } = {},
  extra: Partial<PermissionRequest> = {},
): PermissionRequest {
  const access = pathAccess(a, facts.command)
  const paths: PathFact[] = (facts.paths ?? []).map((p) => ({ raw: p, resolved: p, real: p, access }))
  const req: PermissionRequest = {
    toolName: facts.command === undefined ? 'tool' : 'bash',
    annotations: a,
    paths,
    effects: callEffects(a, { paths, command: facts.command }),
    policy: { approvalPolicy: policy[0], sandboxMode: policy[1] },
    workspaceRoots: [ROOT],
    protectedNames: ['.git', '.keel'],
    protectedPaths: [],
    sessionRules: [],
    osSandbox: facts.osSandbox ?? false,
    ...extra,
  }
  if (facts.command !== undefined) req.command = facts.command
  return req
}

/** A decision as a short string: `allow`, `ask`, or `deny:CODE`. */
function short(d: PermissionDecision): string {
  return d.type === 'deny' ? `deny:${d.errorCode}` : d.type
}

const reader = annotations(true, false, false)
const writer = annotations(false, true, false, true)
const shell = annotations(false, true, true, false)
const network = annotations(true, false, true)
const unnamed = annotations(false, true, false, false)
const planner = annotations(false, false, false)

/** The call classes of the table: what the tool is and what this call names. */
const classes: Record<
  string,
  () => [ToolAnnotations, { paths?: string[]; command?: string; osSandbox?: boolean }]
> = {
  'read inside': () => [reader, { paths: [`${ROOT}/src/a.ts`] }],
  'read outside': () => [reader, { paths: ['/etc/passwd'] }],
  'write inside': () => [writer, { paths: [`${ROOT}/src/a.ts`] }],
  'write outside': () => [writer, { paths: ['/work/other/x'] }],
  'write protected': () => [writer, { paths: [`${ROOT}/.git/config`] }],
  'shell, OS sandbox': () => [shell, { command: 'make test', osSandbox: true }],
  'shell, no OS sandbox': () => [shell, { command: 'make test', osSandbox: false }],
  'network tool': () => [network, {}],
  'destructive, names nothing': () => [unnamed, {}],
  'session state only': () => [planner, {}],
}

// Expected decisions, one row per call class, columns strict / on_request / never.
const expected: Record<SandboxMode, Record<string, [string, string, string]>> = {
  read_only: {
    'read inside': ['allow', 'allow', 'allow'],
    'read outside': ['ask', 'ask', 'deny:OUTSIDE_WORKSPACE'],
    'write inside': ['deny:READ_ONLY_SESSION', 'deny:READ_ONLY_SESSION', 'deny:READ_ONLY_SESSION'],
    'write outside': ['deny:OUTSIDE_WORKSPACE', 'deny:OUTSIDE_WORKSPACE', 'deny:OUTSIDE_WORKSPACE'],
    'write protected': ['deny:READ_ONLY_SESSION', 'deny:READ_ONLY_SESSION', 'deny:READ_ONLY_SESSION'],
    'shell, OS sandbox': ['ask', 'allow', 'allow'],
    'shell, no OS sandbox': ['ask', 'ask', 'deny:SANDBOX_UNAVAILABLE'],
    'network tool': ['ask', 'ask', 'deny:NETWORK_DISABLED'],
    'destructive, names nothing': [
      'deny:READ_ONLY_SESSION',
      'deny:READ_ONLY_SESSION',
      'deny:READ_ONLY_SESSION',
    ],
    'session state only': ['allow', 'allow', 'allow'],
  },
  workspace_write: {
    'read inside': ['allow', 'allow', 'allow'],
    'read outside': ['ask', 'ask', 'deny:OUTSIDE_WORKSPACE'],
    'write inside': ['ask', 'allow', 'allow'],
    'write outside': ['deny:OUTSIDE_WORKSPACE', 'deny:OUTSIDE_WORKSPACE', 'deny:OUTSIDE_WORKSPACE'],
    'write protected': ['deny:PROTECTED_PATH', 'deny:PROTECTED_PATH', 'deny:PROTECTED_PATH'],
    'shell, OS sandbox': ['ask', 'allow', 'allow'],
    'shell, no OS sandbox': ['ask', 'ask', 'deny:SANDBOX_UNAVAILABLE'],
    'network tool': ['ask', 'ask', 'deny:NETWORK_DISABLED'],
    'destructive, names nothing': ['ask', 'ask', 'deny:APPROVAL_REQUIRED'],
    'session state only': ['allow', 'allow', 'allow'],
  },
  danger_full_access: {
    'read inside': ['allow', 'allow', 'allow'],
    'read outside': ['allow', 'allow', 'allow'],
    'write inside': ['ask', 'allow', 'allow'],
    'write outside': ['ask', 'allow', 'allow'],
    'write protected': ['ask', 'allow', 'allow'],
    'shell, OS sandbox': ['ask', 'allow', 'allow'],
    'shell, no OS sandbox': ['ask', 'allow', 'allow'],
    'network tool': ['ask', 'allow', 'allow'],
    'destructive, names nothing': ['ask', 'allow', 'allow'],
    'session state only': ['allow', 'allow', 'allow'],
  },
}

describe('decide: call classes × sandbox mode × approval policy', () => {
  const rows = modes.flatMap((mode) =>
    Object.keys(classes).flatMap((name) =>
      policies.map((policy, i) => ({ mode, name, policy, want: expected[mode][name]![i]! })),
    ),
  )
  it.each(rows)('$mode / $policy / $name → $want', ({ mode, name, policy, want }) => {
    const [a, facts] = classes[name]!()
    const decision = decide(request(a, [policy, mode], facts))
    expect(short(decision)).toBe(want)
    expect(decision.reason.length).toBeGreaterThan(0)
  })

  it('names the source: annotations for reads, policy for limits and sandboxed shells', () => {
    expect(decide(request(reader, ['on_request', 'workspace_write'], { paths: [`${ROOT}/a`] })).source).toBe(
      'annotation',
    )
    expect(decide(request(writer, ['on_request', 'workspace_write'], { paths: ['/etc/x'] })).source).toBe(
      'policy',
    )
    expect(
      decide(request(shell, ['on_request', 'workspace_write'], { command: 'ls', osSandbox: true })).source,
    ).toBe('policy')
  })
})

describe('decide: every annotation combination × policy × sandbox mode', () => {
  const bools = [false, true]
  const combos = bools.flatMap((readOnly) =>
    bools.flatMap((destructive) =>
      bools.flatMap((openWorld) =>
        bools.map((idempotent) => annotations(readOnly, destructive, openWorld, idempotent)),
      ),
    ),
  )
  const facts = [
    { label: 'no facts' },
    { label: 'inside', paths: [`${ROOT}/f`] },
    { label: 'outside', paths: ['/tmp/f'] },
    { label: 'protected', paths: [`${ROOT}/.keel/x`] },
    { label: 'command', command: 'ls', osSandbox: true },
    { label: 'command, no sandbox', command: 'ls' },
  ]
  const cases = combos.flatMap((a) =>
    facts.flatMap((f) => policies.flatMap((p) => modes.map((m) => ({ a, f, p, m })))),
  )

  it(`holds the invariants on all ${cases.length} cases`, () => {
    expect(cases.length).toBe(16 * 6 * 3 * 3)
    for (const { a, f, p, m } of cases) {
      const d = decide(request(a, [p, m], f))
      const label = JSON.stringify({ a, f: f.label, p, m, d })
      // never does not ask
      if (p === 'never') expect(d.type, label).not.toBe('ask')
      // danger_full_access sets no limits: only the policy can refuse (never) or ask (strict)
      if (m === 'danger_full_access') {
        expect(d.type, label).not.toBe('deny')
        if (p !== 'strict') expect(d.type, label).toBe('allow')
      }
      // read_only never allows a write through a path, nor a destructive tool that names nothing
      if (m === 'read_only' && !a.readOnly && f.command === undefined && (f.paths || a.destructive)) {
        expect(d.type, label).toBe('deny')
      }
      // limited modes never allow a path outside the workspace (a read is asked about, and
      // refused under never; a write is refused), nor a write to a protected path
      if (m !== 'danger_full_access' && f.label === 'outside') {
        const read = a.readOnly || f.command !== undefined
        expect(short(d), label).toBe(read && p !== 'never' ? 'ask' : 'deny:OUTSIDE_WORKSPACE')
      }
      if (m === 'workspace_write' && f.label === 'protected' && !a.readOnly) {
        expect(short(d), label).toBe('deny:PROTECTED_PATH')
      }
      // strict lets through without asking only pure reads and session-state-only tools
      if (p === 'strict' && d.type === 'allow') {
        expect(
          f.command === undefined && (a.readOnly ? !a.openWorld : !a.destructive && !f.paths),
          label,
        ).toBe(true)
      }
      // idempotence never changes the decision
      const flipped = decide(request({ ...a, idempotent: !a.idempotent }, [p, m], f))
      expect(flipped, label).toEqual(d)
      // a stricter policy is never more permissive
      const rank = { allow: 0, ask: 1, deny: 2 }
      if (p === 'on_request') {
        expect(
          rank[decide(request(a, ['strict', m], f)).type] >= rank[d.type] || d.type === 'ask',
          label,
        ).toBe(true)
      }
      if (m === 'workspace_write') {
        const ro = decide(request(a, [p, 'read_only'], f))
        expect(rank[ro.type] >= rank[d.type] || ro.source === 'policy', label).toBe(true)
      }
    }
  })
})

describe('decide: tool overrides, session rules, malformed paths', () => {
  it('a tool override decides within the limits but cannot lift them', () => {
    const check = { behavior: 'allow' as const, reason: 'the tool vouches for this call' }
    const inside = request(
      writer,
      ['strict', 'workspace_write'],
      { paths: [`${ROOT}/a`] },
      { toolCheck: check },
    )
    expect(decide(inside)).toEqual({ type: 'allow', source: 'tool_override', reason: check.reason })
    const outside = request(
      writer,
      ['strict', 'workspace_write'],
      { paths: ['/etc/x'] },
      { toolCheck: check },
    )
    expect(short(decide(outside))).toBe('deny:OUTSIDE_WORKSPACE')
    const refuse = { behavior: 'deny' as const, reason: 'branch is protected', errorCode: 'BRANCH_PROTECTED' }
    const refused = decide(request(reader, ['on_request', 'workspace_write'], {}, { toolCheck: refuse }))
    expect(refused).toEqual({
      type: 'deny',
      source: 'tool_override',
      errorCode: 'BRANCH_PROTECTED',
      reason: 'branch is protected',
    })
    const ask = { behavior: 'ask' as const, reason: 'pushes to a remote' }
    expect(decide(request(reader, ['on_request', 'workspace_write'], {}, { toolCheck: ask }))).toEqual({
      type: 'ask',
      source: 'tool_override',
      reason: ask.reason,
      rule: { toolName: 'tool' },
    })
    // a read outside is asked about even when the tool vouches for it
    const outsideRead = request(
      reader,
      ['on_request', 'workspace_write'],
      { paths: ['/etc/hosts'] },
      { toolCheck: check },
    )
    expect(decide(outsideRead)).toMatchObject({ type: 'ask', source: 'policy', rule: { path: '/etc/hosts' } })
    expect(short(decide(request(reader, ['never', 'workspace_write'], {}, { toolCheck: ask })))).toBe(
      'deny:APPROVAL_REQUIRED',
    )
  })

  it('a session rule answers an ask (source user) but never a limit', () => {
    const rules = [{ toolName: 'bash', command: 'make test' }]
    const asked = request(
      shell,
      ['on_request', 'workspace_write'],
      { command: 'make test' },
      { sessionRules: rules },
    )
    expect(decide(asked)).toMatchObject({ type: 'allow', source: 'user' })
    const other = request(
      shell,
      ['on_request', 'workspace_write'],
      { command: 'make clean' },
      { sessionRules: rules },
    )
    expect(decide(other).type).toBe('ask')
    const never = request(
      shell,
      ['never', 'workspace_write'],
      { command: 'make test' },
      { sessionRules: rules },
    )
    expect(decide(never)).toMatchObject({ type: 'allow', source: 'user' })
    const wide = [{ toolName: 'tool' }]
    const outside = request(
      writer,
      ['strict', 'workspace_write'],
      { paths: ['/etc/x'] },
      { sessionRules: wide },
    )
    expect(short(decide(outside))).toBe('deny:OUTSIDE_WORKSPACE')
    const inside = request(
      writer,
      ['strict', 'workspace_write'],
      { paths: [`${ROOT}/x`] },
      { sessionRules: wide },
    )
    expect(decide(inside)).toMatchObject({ type: 'allow', source: 'user' })
  })

  it('refuses NUL bytes in every mode and unjudgeable paths in the limited modes', () => {
    for (const m of modes) {
      const nul: PathFact = { raw: 'a\0b', resolved: 'a\0b', real: null, access: 'read', problem: 'nul-byte' }
      const d = decide({ ...request(reader, ['on_request', m]), paths: [nul] })
      expect(short(d)).toBe('deny:INVALID_PATH')
      const long: PathFact = { raw: 'x', resolved: '/x', real: null, access: 'read', problem: 'too-long' }
      const l = decide({ ...request(reader, ['on_request', m]), paths: [long] })
      expect(short(l)).toBe(m === 'danger_full_access' ? 'allow' : 'deny:PATH_UNRESOLVABLE')
    }
  })

  it('protects names case-insensitively, after Unicode normalization and trailing dots', () => {
    for (const name of ['.git', '.GIT', '.Git', '.keel', '.KEEL', '.git.', '.git ', 'sub/.git']) {
      const d = decide(
        request(writer, ['on_request', 'workspace_write'], { paths: [`${ROOT}/${name}/config`] }),
      )
      expect(short(d), name).toBe('deny:PROTECTED_PATH')
    }
    for (const name of ['.github', 'git', '.gitignore', 'keel', '.keelrc']) {
      const d = decide(request(writer, ['on_request', 'workspace_write'], { paths: [`${ROOT}/${name}`] }))
      expect(short(d), name).toBe('allow')
    }
    // a protected path above the root does not make the whole workspace protected
    const nested = decide({
      ...request(writer, ['on_request', 'workspace_write'], { paths: ['/repo/.git/worktrees/ws/file'] }),
      workspaceRoots: ['/repo/.git/worktrees/ws'],
    })
    expect(short(nested)).toBe('allow')
  })
})
