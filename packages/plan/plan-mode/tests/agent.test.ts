// Plan mode inside a real agent with the approval plugin and the file tools, against the
// scripted chat-completions server: what the model is told and refused is read from the
// requests the server received.
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type ApprovalAnswerer, createAgent, usePlugin } from '@keel/agent'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { fsTools } from '@keel/fs'
import { type RecordedRequest, type ScriptedResponse, startScriptedServer } from '@keel/scripted-server'
import { Session } from '@keel/session'
import { userApproval } from '@keel/user-approval'
import { afterEach, describe, expect, it } from 'vitest'
import { EXIT_PLAN_TOOL, PLAN_MODE_ON, planModePlugin, planModeProjection } from '../src/index.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

type Chat = Array<{ role: string; content?: unknown }>
const chat = (r: RecordedRequest): Chat => (r.body?.messages ?? []) as Chat
const texts = (r: RecordedRequest): string[] =>
  chat(r).map((m) => (typeof m.content === 'string' ? m.content : ''))
/** The text of the tool results of a request, in order. */
const toolResults = (r: RecordedRequest): string[] =>
  chat(r)
    .filter((m) => m.role === 'tool')
    .map((m) => String(m.content))

async function rig(
  script: ScriptedResponse[],
  answerers: ApprovalAnswerer[],
  session = Session.create('plan'),
) {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'keel-plan-')))
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }))
  writeFileSync(join(dir, 'app.js'), 'console.log(1)\n')
  const server = await startScriptedServer({ script })
  const shown: string[] = []
  const agent = await createAgent({
    llm: createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted-model', env: {} }),
    session,
    cwd: dir,
    plugins: [usePlugin(userApproval({ home: join(dir, 'home') }), { osSandbox: 'off' }), planModePlugin],
    tools: fsTools(),
    answerers,
    observers: [{ onDisplay: (n) => shown.push(`${n.kind}: ${n.text}`) }],
  })
  cleanups.push(async () => {
    await agent.close()
    await server.close()
  })
  return { dir, server, agent, session, shown }
}

const write = (content: string): ScriptedResponse => ({
  toolCalls: [{ name: 'write_file', arguments: { path: 'app.js', content } }],
})
const propose = (plan: string): ScriptedResponse => ({
  toolCalls: [{ name: EXIT_PLAN_TOOL, arguments: { plan } }],
})

describe('plan mode in a real agent', () => {
  it('refuses writes until the person approves the plan; a rejection keeps the model planning', async () => {
    const asked: string[] = []
    let answers = 0
    const person: ApprovalAnswerer = {
      name: 'person',
      kind: 'interactive',
      answer(question) {
        asked.push(question.reason)
        answers++
        return answers === 1
          ? { outcome: 'reject', reason: 'also update the test' }
          : { outcome: 'allow-once' }
      },
    }
    const { dir, server, agent, session, shown } = await rig(
      [
        { toolCalls: [{ name: 'read_file', arguments: { path: 'app.js' } }] },
        write('console.log(2)\n'),
        propose('1. Change app.js to print 2.'),
        propose('1. Change app.js to print 2.\n2. Update the test.'),
        write('console.log(2)\n'),
        { text: 'Done.' },
      ],
      [person],
    )
    expect(await agent.runCommand('plan')).toContain('plan mode on')
    const result = await agent.send('Make app.js print 2.')
    expect(result.text).toBe('Done.')
    const first = server.requests[0]!
    expect(texts(first)).toContain(PLAN_MODE_ON)
    expect(first.body?.tools?.map((t) => t.function.name)).toContain(EXIT_PLAN_TOOL)
    // The read ran; the write was refused with a code the model can act on.
    expect(toolResults(server.requests[1]!)[0]).toMatch(/^\s*1\tconsole\.log\(1\)/)
    expect(toolResults(server.requests[2]!)[1]).toMatch(
      /^Error \[PLAN_MODE_READ_ONLY\]: write_file was not run: denied by plugin '@keel\/plan-mode': plan mode is on/,
    )
    // The first plan was rejected: the model got the person's reason and stayed in plan mode.
    expect(toolResults(server.requests[3]!)[2]).toMatch(
      /^Error \[USER_REJECTED\][\s\S]*rejected: also update the test$/,
    )
    expect(asked[0]).toContain('(shown above: "1. Change app.js to print 2.")')
    expect(shown).toEqual([
      "plan: The model's plan:\n\n1. Change app.js to print 2.",
      "plan: The model's plan:\n\n1. Change app.js to print 2.\n2. Update the test.",
    ])
    // The second was approved: plan mode ended and the write ran.
    expect(toolResults(server.requests[4]!)[3]).toContain('The user approved the plan. Plan mode is off')
    expect(toolResults(server.requests[5]!)[4]).not.toMatch(/^Error/)
    expect(readFileSync(join(dir, 'app.js'), 'utf8')).toBe('console.log(2)\n')
    expect(session.events.filter((e) => e.type === 'plan/mode').map((e) => e.data.active)).toEqual([
      true,
      false,
    ])
    expect(session.events.filter((e) => e.type === 'approval/decided').map((e) => e.data.outcome)).toEqual([
      'rejected',
      'allowed-once',
    ])
  })

  it('survives resume, and fails closed (plan mode stays) with nobody to approve the plan', async () => {
    const first = await rig([{ text: 'ok' }], [])
    await first.agent.runCommand('plan', 'on')
    await first.agent.send('hello')
    await first.agent.close()
    const resumed = Session.create('plan', {}, JSON.parse(JSON.stringify(first.session.events)))
    expect(resumed.project(planModeProjection)).toBe(true)
    const second = await rig(
      [write('x\n'), propose('1. Write x.'), { text: 'Here is my plan: write x.' }],
      [],
      resumed,
    )
    await second.agent.send('go on')
    expect(toolResults(second.server.requests[1]!).at(-1)).toMatch(/^Error \[PLAN_MODE_READ_ONLY\]/)
    expect(toolResults(second.server.requests[2]!).at(-1)).toMatch(/^Error \[APPROVAL_UNAVAILABLE\]/)
    expect(resumed.project(planModeProjection)).toBe(true)
    expect(await second.agent.runCommand('plan', 'off')).toBe('plan mode off')
    expect(resumed.project(planModeProjection)).toBe(false)
  })

  it('/plan <task> enters plan mode and queues the task; exit_plan_mode outside plan mode is refused', async () => {
    const { server, agent, session } = await rig([propose('p'), { text: 'fine' }], [])
    expect(await agent.runCommand('plan', 'Fix the bug')).toBe(
      'plan mode on: only read-only tools run; the model will ask you to approve its plan; task queued',
    )
    await agent.idle()
    expect(texts(server.requests[0]!).at(-1)).toBe(PLAN_MODE_ON)
    expect(texts(server.requests[0]!)).toContain('Fix the bug')
    await agent.runCommand('plan', 'off')
    expect(session.events.filter((e) => e.type === 'plan/mode')).toHaveLength(2)
    expect(await agent.runCommand('plan', 'off')).toBe('plan mode was not on')
  })
})
