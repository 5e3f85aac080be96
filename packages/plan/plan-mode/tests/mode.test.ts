import type { PluginContext, PluginDefinition } from '@keel/agent'
import { soloContext } from '@keel/agent/testing'
import { Session } from '@keel/session'
import { describe, expect, it } from 'vitest'
import {
  EXIT_PLAN_TOOL,
  MAX_PLAN_SHOWN,
  PLAN_MODE_ON,
  planDigest,
  planForDisplay,
  planModeConfigSchema,
  planModePlugin,
  planModeVote,
} from '../src/index.js'

const reader = { readOnly: true, destructive: false, openWorld: false, idempotent: true }
const writer = { readOnly: false, destructive: true, openWorld: false, idempotent: false }

describe('planModeVote', () => {
  const cases: Array<[string, boolean, Parameters<typeof planModeVote>[1], string, string?]> = [
    ['a read-only tool in plan mode runs', true, { toolName: 'read_file', annotations: reader }, 'allow'],
    [
      'a writing tool in plan mode is refused',
      true,
      { toolName: 'write_file', annotations: writer },
      'deny',
      'PLAN_MODE_READ_ONLY',
    ],
    [
      'a writing tool outside plan mode is left to the others',
      false,
      { toolName: 'bash', annotations: writer },
      'allow',
    ],
    [
      'the plan in plan mode is asked about',
      true,
      { toolName: EXIT_PLAN_TOOL, annotations: reader, plan: 'p' },
      'ask',
    ],
    [
      'the plan outside plan mode is refused',
      false,
      { toolName: EXIT_PLAN_TOOL, annotations: reader, plan: 'p' },
      'deny',
      'PLAN_MODE_INACTIVE',
    ],
  ]
  it.each(cases)('%s', (_name, active, call, action, code) => {
    const vote = planModeVote(active, call)
    expect(vote.action).toBe(action)
    if (code !== undefined) expect(vote).toMatchObject({ errorCode: code })
  })

  it('tells the model how to get out, and scopes an approval to the exact plan', () => {
    const denied = planModeVote(true, { toolName: 'bash', annotations: writer })
    expect(denied).toMatchObject({ reason: expect.stringContaining(`call ${EXIT_PLAN_TOOL} with your plan`) })
    const asked = planModeVote(true, { toolName: EXIT_PLAN_TOOL, annotations: reader, plan: '1. do it' })
    expect(asked).toMatchObject({
      reason:
        'the model asks to leave plan mode and carry out its plan (shown above: "1. do it"); approve it, or reject it with what to change to keep planning',
      rule: { toolName: EXIT_PLAN_TOOL, command: `plan sha256:${planDigest('1. do it')}` },
    })
    expect(planDigest('1. do it')).not.toBe(planDigest('1. do it differently'))
    expect(planForDisplay('x'.repeat(MAX_PLAN_SHOWN + 5))).toMatch(
      /^The model's plan:\n\nx+\n… \(5 more characters: see/,
    )
    const multi = planModeVote(true, { toolName: EXIT_PLAN_TOOL, annotations: reader, plan: '1. a\n2. b' })
    expect(multi).toMatchObject({ reason: expect.stringContaining('(shown above: "1. a" …)') })
  })
})

describe('after a compaction', () => {
  it('tells the model again that plan mode is on, and only then', async () => {
    const session = Session.create('plan-compact')
    const config = planModeConfigSchema.parse({})
    const solo = soloContext(planModePlugin as PluginDefinition<unknown>, config, { session })
    await planModePlugin.setup?.(solo.context as PluginContext<typeof config>)
    solo.done()
    const start = solo.interceptors[0]!.interceptors.sessionStart!
    expect(await start({ source: 'compact' })).toEqual({ action: 'continue' })
    session.append('plan/mode', { active: true })
    expect(await start({ source: 'compact' })).toEqual({ action: 'continue', context: PLAN_MODE_ON })
    expect(await start({ source: 'resume' })).toEqual({ action: 'continue' })
  })
})
