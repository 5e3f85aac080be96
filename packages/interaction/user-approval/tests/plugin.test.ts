import { mkdtemp, realpath } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  type ApprovalAnswer,
  type ApprovalAnswerer,
  type ApprovalQuestion,
  type PluginHost,
  sessionRulesProjection,
} from '@keel/agent'
import { readFileTool, writeFileTool } from '@keel/fs'
import { Session } from '@keel/session'
import { bashTool } from '@keel/shell'
import type { Tool } from '@keel/tools'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import { setApprovalPolicy, setSandboxMode, userApproval } from '../src/index.js'
import { PluginRig } from './rig.js'

let ws: string
beforeAll(async () => {
  ws = await realpath(await mkdtemp(join(tmpdir(), 'keel-approval-plugin-')))
})
const rigs: PluginRig[] = []
afterEach(async () => {
  for (const rig of rigs.splice(0)) await rig.dispose()
})

/** An unwrapped bash: nothing contains it, so on_request asks before each command. */
const bash = bashTool() as Tool<unknown>
const read = readFileTool() as Tool<unknown>
const write = writeFileTool() as Tool<unknown>

/** An answerer that records the questions it got and gives scripted answers (undefined passes). */
function scripted(
  name: string,
  kind: 'hook' | 'interactive',
  answers: Array<ApprovalAnswer | undefined | Error>,
) {
  const asked: ApprovalQuestion[] = []
  const answerer: ApprovalAnswerer = {
    name,
    kind,
    answer(question) {
      asked.push(question)
      const next = answers.shift()
      if (next instanceof Error) throw next
      return next
    },
  }
  return { answerer, asked }
}

async function rig(config: unknown = {}, answerers: ApprovalAnswerer[] = []): Promise<PluginRig> {
  const r = await new PluginRig(Session.create(`plugin-${rigs.length}`), ws).setup(
    userApproval(),
    config,
    answerers,
  )
  rigs.push(r)
  r.openTurn()
  return r
}

function approvalEvents(session: Session) {
  return session.events.flatMap((e) =>
    e.type === 'approval/asked' || e.type === 'approval/decided'
      ? [{ type: e.type, data: e.data as Record<string, unknown> }]
      : [],
  )
}

describe('the approval vote and the answerer chain', () => {
  it('fails closed when nobody can answer (headless): one asked, one decided unavailable, inside the turn', async () => {
    const r = await rig()
    const decision = await r.beforeTool(bash, { command: 'make test' })
    expect(decision).toMatchObject({ action: 'deny', errorCode: 'APPROVAL_UNAVAILABLE' })
    const events = approvalEvents(r.session)
    expect(events.map((e) => e.type)).toEqual(['approval/asked', 'approval/decided'])
    expect(events[0]!.data).toMatchObject({
      turn: 1,
      toolName: 'bash',
      callId: 'call_1',
      plugin: '@keel/user-approval',
    })
    expect(events[1]!.data).toMatchObject({ id: events[0]!.data.id, outcome: 'unavailable', by: 'none' })
    expect(r.session.openTurn?.turn).toBe(1)
  })

  it('applies never before any answerer', async () => {
    const interactive = scripted('ui', 'interactive', [{ outcome: 'allow-once' }])
    const r = await rig({ approvalPolicy: 'never' }, [interactive.answerer])
    const decision = await r.beforeTool(bash, { command: 'make test' })
    expect(decision).toMatchObject({ action: 'deny', errorCode: 'SANDBOX_UNAVAILABLE' })
    expect(interactive.asked).toHaveLength(0)
    expect(approvalEvents(r.session)).toHaveLength(0)
  })

  it('consults hooks first, then session rules, then interactive answerers', async () => {
    const hook = scripted('hooks', 'hook', [
      { outcome: 'reject', reason: 'policy script says no' },
      undefined,
      undefined,
    ])
    const ui = scripted('ui', 'interactive', [{ outcome: 'allow-session' }])
    const r = await rig({}, [ui.answerer, hook.answerer])
    expect(await r.beforeTool(bash, { command: 'make deploy' })).toMatchObject({
      action: 'deny',
      errorCode: 'HOOK_DENIED',
    })
    expect(ui.asked).toHaveLength(0)
    expect(await r.beforeTool(bash, { command: 'make test' })).toEqual({ action: 'allow' })
    expect(ui.asked).toHaveLength(1)
    expect(r.session.project(sessionRulesProjection)).toEqual([{ toolName: 'bash', command: 'make test' }])
    // the same command is no longer asked about; another one is
    const before = approvalEvents(r.session).length
    expect(await r.beforeTool(bash, { command: 'make test' })).toEqual({ action: 'allow' })
    expect(approvalEvents(r.session)).toHaveLength(before)
    expect(await r.beforeTool(bash, { command: 'make lint' })).toMatchObject({
      errorCode: 'APPROVAL_UNAVAILABLE',
    })
    const decided = approvalEvents(r.session).filter((e) => e.type === 'approval/decided')
    expect(decided.map((e) => [e.data.outcome, e.data.by])).toEqual([
      ['rejected', 'hook'],
      ['allowed-session', 'user'],
      ['unavailable', 'none'],
    ])
  })

  it("counts a hook's allow-session as allow-once, and a throwing answerer as a rejection", async () => {
    const hook = scripted('hooks', 'hook', [{ outcome: 'allow-session' }, new Error('hook crashed')])
    const r = await rig({}, [hook.answerer])
    expect(await r.beforeTool(bash, { command: 'ls' })).toEqual({ action: 'allow' })
    expect(r.session.project(sessionRulesProjection)).toEqual([])
    expect(await r.beforeTool(bash, { command: 'ls' })).toMatchObject({
      action: 'deny',
      errorCode: 'HOOK_DENIED',
    })
    const last = approvalEvents(r.session).at(-1)!
    expect(last.data).toMatchObject({
      outcome: 'rejected',
      by: 'hook',
      reason: 'the answerer failed: hook crashed',
    })
  })

  it('a hook ask on a question passes it on to the interactive answerers; a hook never sees a denied call', async () => {
    const hook = scripted('hooks', 'hook', [{ outcome: 'ask', reason: 'hook wants a person' }])
    const ui = scripted('ui', 'interactive', [{ outcome: 'reject', reason: 'no' }])
    const r = await rig({}, [hook.answerer, ui.answerer])
    expect(await r.beforeTool(bash, { command: 'make deploy' })).toMatchObject({ errorCode: 'USER_REJECTED' })
    expect(ui.asked).toHaveLength(1)
    expect(await r.beforeTool(write, { path: '../secret.txt', content: 'x' })).toMatchObject({
      errorCode: 'OUTSIDE_WORKSPACE',
    })
    expect(hook.asked).toHaveLength(1)
  })

  it('records cancelled when the turn is aborted while a person is being asked', async () => {
    const waiting: ApprovalAnswerer = {
      name: 'slow',
      kind: 'interactive',
      answer: () => new Promise(() => {}),
    }
    const r = await rig({}, [waiting])
    const controller = new AbortController()
    const pending = r.beforeTool(bash, { command: 'ls' }, controller.signal)
    controller.abort()
    expect(await pending).toMatchObject({ action: 'deny', errorCode: 'APPROVAL_CANCELLED' })
    expect(approvalEvents(r.session).at(-1)!.data).toMatchObject({ outcome: 'cancelled' })
  })

  it('sends limit denials to the model with their code, without asking', async () => {
    const ui = scripted('ui', 'interactive', [{ outcome: 'allow-once' }])
    const r = await rig({}, [ui.answerer])
    expect(await r.beforeTool(write, { path: '../secret.txt', content: 'x' })).toMatchObject({
      action: 'deny',
      errorCode: 'OUTSIDE_WORKSPACE',
    })
    expect(await r.beforeTool(write, { path: '.git/config', content: 'x' })).toMatchObject({
      errorCode: 'PROTECTED_PATH',
    })
    expect(ui.asked).toHaveLength(0)
  })

  it('asks before a read outside the workspace; "for this session" covers that path only; never refuses it', async () => {
    const ui = scripted('ui', 'interactive', [
      { outcome: 'allow-session' },
      { outcome: 'reject', reason: 'no' },
    ])
    const r = await rig({}, [ui.answerer])
    expect(await r.vote(read, { path: '/etc/hosts' })).toMatchObject({
      action: 'ask',
      rule: { toolName: 'read_file', path: '/etc/hosts' },
    })
    expect(await r.beforeTool(read, { path: '/etc/hosts' })).toEqual({ action: 'allow' })
    expect(ui.asked[0]!.rule).toEqual({ toolName: 'read_file', path: '/etc/hosts' })
    expect(r.session.project(sessionRulesProjection)).toEqual([{ toolName: 'read_file', path: '/etc/hosts' }])
    // the rule answers the same read at once (decided by the approval vote, nothing asked)
    expect(await r.vote(read, { path: '/etc/hosts' })).toEqual({ action: 'allow' })
    // another file outside is a new question
    expect(await r.beforeTool(read, { path: '/etc/passwd' })).toMatchObject({ errorCode: 'USER_REJECTED' })
    expect(ui.asked).toHaveLength(2)
    setApprovalPolicy(r.session, 'never')
    expect(await r.beforeTool(read, { path: '/etc/passwd' })).toMatchObject({
      errorCode: 'OUTSIDE_WORKSPACE',
    })
    // a rule the person made earlier still allows under never
    expect(await r.beforeTool(read, { path: '/etc/hosts' })).toEqual({ action: 'allow' })
    expect(ui.asked).toHaveLength(2)
  })

  it('a switch to a value that is no policy or mode is a typed error, and nothing is recorded', async () => {
    const r = await rig({ approvalPolicy: 'strict' })
    const before = r.session.events.length
    const refusal = (set: () => void): unknown => {
      try {
        set()
      } catch (error) {
        return error
      }
      return undefined
    }
    const policy = refusal(() => setApprovalPolicy(r.session, 'sometimes' as never))
    expect(policy).toMatchObject({ code: 'EVENT_DATA_INVALID' })
    expect(String((policy as Error).message)).toContain('approval/policy')
    const mode = refusal(() => setSandboxMode(r.session, 'x'.repeat(100_000) as never))
    expect(mode).toMatchObject({ code: 'EVENT_DATA_INVALID' })
    expect((mode as Error).message.length).toBeLessThan(2_000)
    expect(r.session.events.length).toBe(before)
  })

  it('follows policy switches in the log (latest wins) over the configured default', async () => {
    const r = await rig({ approvalPolicy: 'strict' })
    expect(await r.beforeTool(bash, { command: 'ls' })).toMatchObject({ errorCode: 'APPROVAL_UNAVAILABLE' })
    setApprovalPolicy(r.session, 'never')
    expect(await r.beforeTool(bash, { command: 'ls' })).toMatchObject({ errorCode: 'SANDBOX_UNAVAILABLE' })
  })

  it('provides approval.policy: the configured default, then the switches in the log; listeners hear them', async () => {
    const r = await rig({ approvalPolicy: 'strict', sandboxMode: 'read_only' })
    const policy = (r.host as PluginHost).services.get('approval.policy')!
    // nothing switched yet: the configured default, which the log does not hold
    expect(r.session.events.some((e) => e.type === 'approval/policy' || e.type === 'sandbox/mode')).toBe(
      false,
    )
    expect(policy.current()).toEqual({ approvalPolicy: 'strict', sandboxMode: 'read_only' })
    const heard: unknown[] = []
    const stop = policy.subscribe((p) => heard.push(p))
    setApprovalPolicy(r.session, 'never')
    policy.setSandboxMode('workspace_write')
    stop()
    policy.setApprovalPolicy('on_request')
    expect(heard).toEqual([
      { approvalPolicy: 'never', sandboxMode: 'read_only' },
      { approvalPolicy: 'never', sandboxMode: 'workspace_write' },
    ])
    expect(policy.current()).toEqual({ approvalPolicy: 'on_request', sandboxMode: 'workspace_write' })
  })

  it('registers /policy and /sandbox: show the policy in force, switch it, refuse an unknown value', async () => {
    const r = await rig()
    const host = r.host as PluginHost
    const run = (name: string, args: string) =>
      host.command(name)!.run(args, { signal: new AbortController().signal, source: 'user' })
    expect(await run('policy', '')).toBe('approval policy on_request, sandbox mode workspace_write')
    expect(await run('policy', 'strict')).toBe('approval policy set to strict')
    expect(await run('sandbox', 'read_only')).toBe('sandbox mode set to read_only')
    expect(await run('sandbox', 'yolo')).toMatch(/^unknown sandbox mode "yolo": use /)
    // a pasted megabyte is not echoed back whole
    const pasted = await run('policy', 'y'.repeat(1_000_000))
    expect(pasted).toMatch(/^unknown approval policy "y+…/)
    expect((pasted as string).length).toBeLessThan(1_000)
    expect(host.services.get('approval.policy')!.current()).toEqual({
      approvalPolicy: 'strict',
      sandboxMode: 'read_only',
    })
  })

  it('refuses a bad config with a clear error naming the field', async () => {
    await expect(rig({ approvalPolicy: 'sometimes' })).rejects.toThrow(/approvalPolicy/)
    await expect(rig({ sandboxMode: 'yolo' })).rejects.toThrow(/sandboxMode/)
  })
})
