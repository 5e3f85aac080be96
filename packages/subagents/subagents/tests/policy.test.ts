import type { RunPolicy } from '@keel/user-approval'
import { describe, expect, it } from 'vitest'
import { childComposition, childPolicy, childTools, requestedPolicy } from '../src/index.js'

const policy = (
  approvalPolicy: RunPolicy['approvalPolicy'],
  sandboxMode: RunPolicy['sandboxMode'],
): RunPolicy => ({
  approvalPolicy,
  sandboxMode,
})

describe('childPolicy', () => {
  it.each([
    // parent, requested, child
    [policy('on_request', 'workspace_write'), {}, policy('on_request', 'workspace_write')],
    [
      policy('on_request', 'workspace_write'),
      { sandboxMode: 'read_only' },
      policy('on_request', 'read_only'),
    ],
    [
      policy('on_request', 'workspace_write'),
      { sandboxMode: 'danger_full_access' },
      policy('on_request', 'workspace_write'),
    ],
    [
      policy('on_request', 'read_only'),
      { sandboxMode: 'workspace_write' },
      policy('on_request', 'read_only'),
    ],
    [
      policy('on_request', 'danger_full_access'),
      { sandboxMode: 'workspace_write' },
      policy('on_request', 'workspace_write'),
    ],
    [
      policy('on_request', 'workspace_write'),
      { approvalPolicy: 'never' },
      policy('never', 'workspace_write'),
    ],
    [
      policy('on_request', 'workspace_write'),
      { approvalPolicy: 'strict' },
      policy('strict', 'workspace_write'),
    ],
    [policy('strict', 'workspace_write'), { approvalPolicy: 'never' }, policy('strict', 'workspace_write')],
    [
      policy('strict', 'workspace_write'),
      { approvalPolicy: 'on_request' },
      policy('strict', 'workspace_write'),
    ],
    [
      policy('never', 'workspace_write'),
      { approvalPolicy: 'on_request' },
      policy('never', 'workspace_write'),
    ],
    [
      policy('never', 'danger_full_access'),
      { approvalPolicy: 'strict', sandboxMode: 'read_only' },
      policy('never', 'read_only'),
    ],
  ] as const)('parent %o asking %o runs %o', (parent, requested, expected) => {
    expect(childPolicy(parent, requested)).toEqual(expected)
  })

  it('reads permission modes: plan is read-only, dontAsk never asks, the wide ones cannot widen', () => {
    expect(requestedPolicy({ permissionMode: 'plan' })).toEqual({ sandboxMode: 'read_only' })
    expect(requestedPolicy({ permissionMode: 'dontAsk' })).toEqual({ approvalPolicy: 'never' })
    expect(requestedPolicy({ permissionMode: 'bypassPermissions' })).toEqual({})
    expect(requestedPolicy({ permissionMode: 'plan', sandboxMode: 'danger_full_access' })).toEqual({
      sandboxMode: 'read_only',
    })
    const parent = policy('on_request', 'workspace_write')
    for (const mode of ['acceptEdits', 'auto', 'bypassPermissions', 'default'] as const) {
      expect(childPolicy(parent, requestedPolicy({ permissionMode: mode }))).toEqual(parent)
    }
  })
})

describe('childTools', () => {
  const parent = [
    'read_file',
    'write_file',
    'bash',
    'todo_write',
    'task',
    'mcp__gh__issues',
    'mcp__gh__pr',
    'mcp__db__q',
  ]

  it("keeps the parent's order, never adds a tool the parent lacks, and drops task unless the child may delegate", () => {
    expect(childTools({}, parent, false)).toEqual(parent.filter((t) => t !== 'task'))
    expect(childTools({}, parent, true)).toEqual(parent)
    expect(childTools({ tools: ['bash', 'read_file', 'web_fetch'] }, parent, false)).toEqual([
      'read_file',
      'bash',
    ])
    expect(childTools({ disallowedTools: ['bash', 'mcp__gh'] }, parent, false)).toEqual([
      'read_file',
      'write_file',
      'todo_write',
      'mcp__db__q',
    ])
    expect(childTools({ tools: ['mcp__gh', 'task'] }, parent, false)).toEqual([
      'mcp__gh__issues',
      'mcp__gh__pr',
    ])
  })

  it("records the child's composition: the parent's plugins (less the delegating one), its model and exact tools", () => {
    const composition = childComposition(
      {
        preset: 'coding',
        plugins: [
          { name: '@keel/user-approval', version: '1', configDigest: 'sha256:a' },
          { name: '@keel/subagents', version: '1', configDigest: 'sha256:b' },
        ],
        tools: ['fs', 'shell'],
        model: 'parent-model',
        toolFilter: { except: ['bash'] },
      },
      { plugin: '@keel/subagents', mayDelegate: false, model: 'child-model', tools: ['read_file'] },
    )
    expect(composition).toEqual({
      preset: 'coding',
      plugins: [{ name: '@keel/user-approval', version: '1', configDigest: 'sha256:a' }],
      tools: ['fs', 'shell'],
      model: 'child-model',
      toolFilter: { only: ['read_file'] },
    })
  })
})
