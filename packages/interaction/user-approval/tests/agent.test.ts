import { existsSync } from 'node:fs'
import { mkdir, mkdtemp, realpath, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import {
  type AgentOptions,
  type ApprovalAnswerer,
  createAgent,
  type StoreHandle,
  sessionRulesProjection,
  usePlugin,
} from '@keel/agent'
import { answerWith } from '@keel/agent/testing'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { readFileTool, writeFileTool } from '@keel/fs'
import { type ScriptedResponse, type ScriptedServer, startScriptedServer } from '@keel/scripted-server'
import type { Session } from '@keel/session'
import { bashTool } from '@keel/shell'
import { JsonlStore } from '@keel/store-jsonl'
import type { Tool } from '@keel/tools'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { recordedPolicyProjection, setSandboxMode, userApproval } from '../src/index.js'

/** A person who gives these answers in order (`session`: allow for this session). */
function person(answers: Array<'allow' | 'session' | 'deny'>): ApprovalAnswerer {
  return answerWith(() => answers.shift() ?? 'deny', 'person')
}

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

let home: string
let ws: string
beforeEach(async () => {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'keel-approval-agent-')))
  home = join(base, 'home')
  ws = join(base, 'ws')
  await mkdir(ws, { recursive: true })
  await writeFile(join(base, 'secret.txt'), 'TOP SECRET\n')
  await writeFile(join(ws, 'notes.txt'), 'inside\n')
})

/** `bash` left unwrapped and the OS sandbox off: every command needs an answer. */
const tools = () => [readFileTool(), writeFileTool(), bashTool()] as Tool<unknown>[]

async function agentOn(
  handle: StoreHandle,
  script: ScriptedResponse[],
  answerers: ApprovalAnswerer[] = [],
  extra: Partial<AgentOptions> = {},
) {
  const server: ScriptedServer = await startScriptedServer({ script })
  const agent = await createAgent({
    llm: createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted-model', env: {} }),
    session: handle,
    cwd: ws,
    plugins: [usePlugin(userApproval({ home }), { osSandbox: 'off' })],
    tools: tools(),
    answerers,
    ...extra,
  })
  cleanups.push(async () => {
    await agent.close()
    await server.close()
  })
  return { agent, server }
}

const call = (name: string, args: Record<string, unknown>): ScriptedResponse => ({
  toolCalls: [{ name, arguments: args }],
})

function results(session: Session) {
  return session.events.flatMap((e) => (e.type === 'tool/result' ? [e.data] : []))
}

/** The tool messages the model was sent in request `index`. */
function toolMessages(server: ScriptedServer, index: number): string[] {
  const body = server.requests[index]!.body as { messages: Array<{ role: string; content: string }> }
  return body.messages.filter((m) => m.role === 'tool').map((m) => m.content)
}

describe('inside a real agent (scripted model over HTTP, JSONL store)', () => {
  it('asks before a read outside the workspace (headless: refused) and refuses a write there, with codes the model sees', async () => {
    const store = new JsonlStore({ home: join(home, '.keel') })
    cleanups.push(() => store.close())
    const handle = await store.create({ header: { cwd: ws } })
    const { agent, server } = await agentOn(handle, [
      call('read_file', { path: '../secret.txt' }),
      call('write_file', { path: '../x.txt', content: 'x' }),
      call('read_file', { path: 'notes.txt' }),
      { text: 'Done.' },
    ])
    const result = await agent.send('Look around.')
    expect(result.reason).toBe('completed')
    const codes = results(handle.session).map((r) => r.errorCode ?? 'ok')
    expect(codes).toEqual(['APPROVAL_UNAVAILABLE', 'OUTSIDE_WORKSPACE', 'ok'])
    expect(existsSync(join(ws, '..', 'x.txt'))).toBe(false)
    const seen = toolMessages(server, 1).join('\n')
    expect(seen).toContain('outside the workspace')
    expect(seen).not.toContain('TOP SECRET')
  })

  it('headless: a command that needs approval fails closed and the turn goes on', async () => {
    const store = new JsonlStore({ home: join(home, '.keel') })
    cleanups.push(() => store.close())
    const handle = await store.create({ header: { cwd: ws } })
    const { agent, server } = await agentOn(handle, [
      call('bash', { command: 'touch ran.txt' }),
      { text: 'Could not run it.' },
    ])
    await agent.send('Run it.')
    expect(existsSync(join(ws, 'ran.txt'))).toBe(false)
    expect(results(handle.session).map((r) => r.errorCode)).toEqual(['APPROVAL_UNAVAILABLE'])
    expect(toolMessages(server, 1)[0]).toContain('nobody can answer')
    const types = handle.session.events.map((e) => e.type)
    const asked = types.indexOf('approval/asked')
    expect(types.slice(asked, asked + 3)).toEqual(['approval/asked', 'approval/decided', 'tool/result'])
    expect(types.indexOf('turn/end')).toBeGreaterThan(asked)
  })

  it('"allow for this session" from a person survives resume and is inherited by a fork, not by the parent', async () => {
    const keelHome = join(home, '.keel')
    const store = new JsonlStore({ home: keelHome })
    const handle = await store.create({ header: { cwd: ws } })
    // allow `touch one.txt` for the session, reject `touch two.txt`
    const terminal = answerWith((q) => (q.rule.command === 'touch one.txt' ? 'session' : 'deny'), 'person')
    const first = await agentOn(
      handle,
      [
        call('bash', { command: 'touch one.txt' }),
        call('bash', { command: 'touch two.txt' }),
        call('bash', { command: 'touch one.txt' }),
        { text: 'ok' },
      ],
      [terminal],
    )
    await first.agent.send('Touch files.')
    expect(results(handle.session).map((r) => r.errorCode ?? 'ok')).toEqual(['ok', 'USER_REJECTED', 'ok'])
    expect(toolMessages(first.server, 2).at(-1)).toContain('declined')
    expect(existsSync(join(ws, 'one.txt'))).toBe(true)
    expect(existsSync(join(ws, 'two.txt'))).toBe(false)
    expect(handle.session.events.filter((e) => e.type === 'approval/asked')).toHaveLength(2)
    setSandboxMode(handle.session, 'read_only')
    await first.agent.close()
    await store.close()

    // resume: a fresh store reads the log; the rule and the switch are folded back
    const reopened = new JsonlStore({ home: keelHome })
    cleanups.push(() => reopened.close())
    const resumed = await reopened.open(handle.session.id)
    expect(resumed.session.project(sessionRulesProjection)).toEqual([
      { toolName: 'bash', command: 'touch one.txt' },
    ])
    expect(resumed.session.project(recordedPolicyProjection)).toEqual({ sandboxMode: 'read_only' })
    // headless now, and read-only: the allowed command runs without asking; a write tool is refused
    const again = await agentOn(resumed, [
      call('bash', { command: 'touch one.txt' }),
      call('write_file', { path: 'w.txt', content: 'x' }),
      { text: 'ok' },
    ])
    await again.agent.send('Again.')
    expect(
      results(resumed.session)
        .slice(-2)
        .map((r) => r.errorCode ?? 'ok'),
    ).toEqual(['ok', 'READ_ONLY_SESSION'])
    expect(resumed.session.events.filter((e) => e.type === 'approval/asked')).toHaveLength(2)
    await again.agent.close()

    // fork: the child inherits the rule; a rule made in the child stays there
    const child = await reopened.fork(resumed.session.id)
    expect(child.session.project(sessionRulesProjection)).toEqual([
      { toolName: 'bash', command: 'touch one.txt' },
    ])
    setSandboxMode(child.session, 'workspace_write')
    const forked = await agentOn(
      child,
      [call('bash', { command: 'touch three.txt' }), { text: 'ok' }],
      [person(['session'])],
    )
    await forked.agent.send('Fork work.')
    expect(child.session.project(sessionRulesProjection)).toHaveLength(2)
    const parentAgain = await new JsonlStore({ home: keelHome }).load(resumed.session.id)
    expect(parentAgain.project(sessionRulesProjection)).toHaveLength(1)
  })
})
