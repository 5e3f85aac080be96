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
      errorCode: 'USER_REJECTED',
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
      errorCode: 'USER_REJECTED',
    })
    const last = approvalEvents(r.session).at(-1)!
    expect(last.data).toMatchObject({
      outcome: 'rejected',
      by: 'hook',
      reason: 'the answerer failed: hook crashed',
    })
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

  it('refuses a bad config with a clear error naming the field', async () => {
    await expect(rig({ approvalPolicy: 'sometimes' })).rejects.toThrow(/approvalPolicy/)
    await expect(rig({ sandboxMode: 'yolo' })).rejects.toThrow(/sandboxMode/)
  })
})
