import { mkdtemp, realpath } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readFileTool } from '@keel/fs'
import { Session } from '@keel/session'
import { bashTool } from '@keel/shell'
import type { Tool } from '@keel/tools'
import { afterEach, beforeAll, describe, expect, it } from 'vitest'
import {
  type ApprovalAnswer,
  type ApprovalAnswerer,
  type ApprovalQuestion,
  activePolicy,
  fromToolAnswerer,
  registerApprovalAnswerer,
  sessionRulesProjection,
  setApprovalPolicy,
  userApproval,
} from '../src/index.js'
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
    userApproval({ answerers }),
    config,
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

describe('answering ask inside the plugin', () => {
  it('fails closed when nobody can answer (headless): one asked, one decided unavailable, inside the turn', async () => {
    const r = await rig()
    const decision = await r.beforeTool(bash, { command: 'make test' })
    expect(decision).toMatchObject({ action: 'deny', errorCode: 'APPROVAL_UNAVAILABLE' })
    const events = approvalEvents(r.session)
    expect(events.map((e) => e.type)).toEqual(['approval/asked', 'approval/decided'])
    expect(events[0]!.data).toMatchObject({ turn: 1, toolName: 'bash', callId: 'call_1' })
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

  it('hooks review calls the decision allowed: a reject denies, an ask opens a question, an allow or a pass runs', async () => {
    const hook = scripted('hooks', 'hook', [
      { outcome: 'reject', reason: 'no reading notes' },
      { outcome: 'ask', reason: 'hook wants a person' },
      { outcome: 'allow-once' },
      undefined,
    ])
    const ui = scripted('ui', 'interactive', [{ outcome: 'allow-once' }])
    const r = await rig({}, [ui.answerer, hook.answerer])
    expect(await r.beforeTool(read, { path: 'notes.txt' })).toMatchObject({
      action: 'deny',
      errorCode: 'HOOK_DENIED',
      reason: 'a hook refused it: no reading notes',
    })
    expect(await r.beforeTool(read, { path: 'notes.txt' })).toEqual({ action: 'allow' })
    // the hook saw the allowed call once per call; the person only the one the hook asked about
    expect(hook.asked.map((q) => q.permission)).toEqual(['allow', 'allow'])
    expect(ui.asked.map((q) => [q.permission, q.reason])).toEqual([['ask', 'hook wants a person']])
    expect(await r.beforeTool(read, { path: 'notes.txt' })).toEqual({ action: 'allow' })
    expect(await r.beforeTool(read, { path: 'notes.txt' })).toEqual({ action: 'allow' })
    const events = approvalEvents(r.session)
    expect(events.map((e) => [e.type, e.type === 'approval/asked' ? e.data.reason : e.data.outcome])).toEqual(
      [
        ['approval/asked', 'no reading notes'],
        ['approval/decided', 'rejected'],
        ['approval/asked', 'hook wants a person'],
        ['approval/decided', 'allowed-once'],
      ],
    )
    expect(events.filter((e) => e.type === 'approval/decided').map((e) => e.data.by)).toEqual([
      'hook',
      'user',
    ])
  })

  it('a hook ask on a question passes it on to the interactive answerers; a hook never sees a denied call', async () => {
    const hook = scripted('hooks', 'hook', [{ outcome: 'ask', reason: 'hook wants a person' }])
    const ui = scripted('ui', 'interactive', [{ outcome: 'reject', reason: 'no' }])
    const r = await rig({}, [hook.answerer, ui.answerer])
    expect(await r.beforeTool(bash, { command: 'make deploy' })).toMatchObject({ errorCode: 'USER_REJECTED' })
    expect(ui.asked).toHaveLength(1)
    expect(await r.beforeTool(read, { path: '../secret.txt' })).toMatchObject({
      errorCode: 'OUTSIDE_WORKSPACE',
    })
    expect(hook.asked).toHaveLength(1)
  })

  it('answerers registered by another plugin on the same session take part, and can be removed', async () => {
    const r = await rig()
    const hook = scripted('other-plugin', 'hook', [{ outcome: 'allow-once' }])
    const unregister = registerApprovalAnswerer(r.session, hook.answerer)
    expect(await r.beforeTool(bash, { command: 'ls' })).toEqual({ action: 'allow' })
    unregister()
    expect(await r.beforeTool(bash, { command: 'ls' })).toMatchObject({ errorCode: 'APPROVAL_UNAVAILABLE' })
  })

  it("uses the agent's ToolAnswerer type as an interactive answerer (allow once / decline)", async () => {
    const seen: string[] = []
    const answers: Array<'allow' | 'deny'> = ['allow', 'deny']
    const r = await rig({}, [
      fromToolAnswerer((q) => {
        seen.push(`${q.call.name}:${q.facts.command}:${q.reason}`)
        return answers.shift()!
      }),
    ])
    expect(await r.beforeTool(bash, { command: 'ls' })).toEqual({ action: 'allow' })
    expect(await r.beforeTool(bash, { command: 'ls' })).toMatchObject({ errorCode: 'USER_REJECTED' })
    expect(seen[0]).toMatch(/^bash:ls:no OS sandbox/)
    expect(r.session.project(sessionRulesProjection)).toEqual([])
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
    expect(await r.beforeTool(read, { path: '../secret.txt' })).toMatchObject({
      action: 'deny',
      errorCode: 'OUTSIDE_WORKSPACE',
    })
    expect(await r.beforeTool(read, { path: '/etc/passwd' })).toMatchObject({
      errorCode: 'OUTSIDE_WORKSPACE',
    })
    expect(ui.asked).toHaveLength(0)
  })

  it('follows policy switches in the log (latest wins) over the configured default', async () => {
    const r = await rig({ approvalPolicy: 'strict' })
    expect(await r.beforeTool(bash, { command: 'ls' })).toMatchObject({ errorCode: 'APPROVAL_UNAVAILABLE' })
    setApprovalPolicy(r.session, 'never')
    expect(await r.beforeTool(bash, { command: 'ls' })).toMatchObject({ errorCode: 'SANDBOX_UNAVAILABLE' })
  })

  it('publishes the policy in force (configured default, then switches) while it runs, for other plugins', async () => {
    const r = await rig({ approvalPolicy: 'strict', sandboxMode: 'read_only' })
    // nothing switched yet: the configured default, which the log does not hold
    expect(r.session.events.some((e) => e.type === 'approval/policy' || e.type === 'sandbox/mode')).toBe(
      false,
    )
    expect(activePolicy(r.session)).toEqual({ approvalPolicy: 'strict', sandboxMode: 'read_only' })
    setApprovalPolicy(r.session, 'never')
    expect(activePolicy(r.session)).toEqual({ approvalPolicy: 'never', sandboxMode: 'read_only' })
    await r.dispose()
    rigs.splice(rigs.indexOf(r), 1)
    expect(activePolicy(r.session)).toBeUndefined()
    expect(activePolicy(Session.create('no-approval'))).toBeUndefined()
  })

  it('refuses a bad config with a clear error naming the field', async () => {
    await expect(rig({ approvalPolicy: 'sometimes' })).rejects.toThrow(/approvalPolicy/)
    await expect(rig({ sandboxMode: 'yolo' })).rejects.toThrow(/sandboxMode/)
  })
})
