import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ApprovalQuestion } from '@keel/agent'
import { answerWith } from '@keel/agent/testing'
import { afterEach, describe, expect, it } from 'vitest'
import { GENERAL, ofType, PARENT_PROMPT, type SubagentRig, subagentRig } from './subagents-rig.js'

let rig: SubagentRig
afterEach(async () => {
  await rig?.close()
})

function task(id: string, prompt: string, agent?: string) {
  return {
    id,
    name: 'task',
    arguments: { description: prompt.slice(0, 20), prompt, ...(agent ? { agent } : {}) },
  }
}

const write = (id: string, path: string, content: string) => ({
  toolCalls: [{ id, name: 'write_file', arguments: { path, content } }],
})

describe("a child's approval questions", () => {
  it("go to the parent's answerer, saying which subagent asks; an allow for the session is kept by both", async () => {
    rig = await subagentRig()
    const asked: ApprovalQuestion[] = []
    rig.route(
      PARENT_PROMPT,
      { toolCalls: [task('call_1', 'write a.txt')] },
      { toolCalls: [task('call_2', 'write b.txt')] },
      { text: 'written' },
    )
    rig.route(
      GENERAL,
      write('w1', 'a.txt', 'A'),
      write('w2', 'a2.txt', 'A2'),
      { text: 'wrote a.txt and a2.txt' },
      write('w3', 'b.txt', 'B'),
      { text: 'wrote b.txt' },
    )
    const { agent } = await rig.parent({
      approvalPolicy: 'strict',
      answerers: [
        answerWith((q) => {
          asked.push(q)
          return 'session'
        }),
      ],
    })
    expect(await agent.send('write two files')).toMatchObject({ reason: 'completed', text: 'written' })
    expect(await readFile(join(rig.cwd, 'a.txt'), 'utf8')).toBe('A')
    expect(await readFile(join(rig.cwd, 'b.txt'), 'utf8')).toBe('B')

    // one person's answer: the first child's first write; the rest were covered by rules
    expect(asked).toHaveLength(1)
    const [spawnA, spawnB] = ofType(agent.session.events, 'subagent/spawned').map((e) => e.data.child)
    expect(asked[0]!.delegate).toEqual({ agent: 'general-purpose', session: spawnA })
    expect(asked[0]!.reason).toMatch(/^subagent general-purpose asks: /u)
    expect(asked[0]!.toolName).toBe('write_file')
    expect(asked[0]!.callId).toBe('call_1')

    // the parent's log records both questions it settled, under the task calls
    const parentAsked = ofType(agent.session.events, 'approval/asked').map((e) => e.data)
    expect(parentAsked.map((q) => [q.callId, q.toolName, q.plugin])).toEqual([
      ['call_1', 'write_file', '@keel/subagents'],
      ['call_2', 'write_file', '@keel/subagents'],
    ])
    expect(ofType(agent.session.events, 'approval/decided').map((e) => [e.data.outcome, e.data.by])).toEqual([
      ['allowed-session', 'user'],
      ['allowed-session', 'session-rule'],
    ])
    // the first child recorded the person's rule: its second write was not even asked about
    const childA = await rig.store.load(spawnA!)
    expect(
      ofType(childA.events, 'approval/decided').map((e) => [e.data.outcome, e.data.by, e.data.answerer]),
    ).toEqual([['allowed-session', 'user', `parent session ${agent.session.id}`]])
    expect(ofType(childA.events, 'tool/result').map((e) => e.data.errorCode)).toEqual([undefined, undefined])
    // the second child's write was allowed by the parent's rule, without asking the person
    const childB = await rig.store.load(spawnB!)
    expect(ofType(childB.events, 'approval/decided').map((e) => [e.data.outcome, e.data.by])).toEqual([
      ['allowed-once', 'user'],
    ])
  })

  it('fail closed in a child when the parent has nobody to ask', async () => {
    rig = await subagentRig()
    rig.route(PARENT_PROMPT, { toolCalls: [task('call_1', 'write a.txt')] }, { text: 'could not' })
    rig.route(GENERAL, write('w1', 'a.txt', 'A'), { text: 'the write was refused' })
    const { agent } = await rig.parent({ approvalPolicy: 'strict' })
    expect(await agent.send('write a file')).toMatchObject({ reason: 'completed' })
    const child = await rig.store.load(ofType(agent.session.events, 'subagent/spawned')[0]!.data.child)
    expect(ofType(child.events, 'tool/result')[0]!.data.errorCode).toBe('APPROVAL_UNAVAILABLE')
    expect(ofType(agent.session.events, 'approval/decided')[0]!.data.outcome).toBe('unavailable')
  })
})

describe("a child's sandbox", () => {
  it("is never wider than the parent's, and follows the parent's switches while it runs", async () => {
    rig = await subagentRig()
    await mkdir(join(rig.cwd, '.keel', 'agents'), { recursive: true })
    await writeFile(
      join(rig.cwd, '.keel', 'agents', 'wide.md'),
      '---\nname: wide\ndescription: asks for more than it may have\nsandboxMode: danger_full_access\ntools: Read, Write\n---\nYou write files for the parent.\n',
    )
    let parentAgent: Awaited<ReturnType<SubagentRig['parent']>>['agent'] | undefined
    rig.route(PARENT_PROMPT, { toolCalls: [task('call_1', 'write twice', 'wide')] }, { text: 'ok' })
    rig.route(
      'You write files for the parent.',
      write('w1', 'one.txt', '1'),
      () => {
        // the person narrows the parent while the child runs
        parentAgent!.services.get('approval.policy')!.setSandboxMode('read_only')
        return write('w2', 'two.txt', '2')
      },
      { text: 'done' },
    )
    const { agent } = await rig.parent()
    parentAgent = agent
    await agent.send('delegate writes')
    const child = await rig.store.load(ofType(agent.session.events, 'subagent/spawned')[0]!.data.child)
    expect(ofType(child.events, 'subagent/descriptor')[0]!.data).toMatchObject({
      agent: 'wide',
      source: 'project',
      tools: ['read_file', 'write_file'],
      policy: { approvalPolicy: 'on_request', sandboxMode: 'workspace_write' },
    })
    expect(ofType(child.events, 'sandbox/mode').map((e) => e.data.sandboxMode)).toEqual(['read_only'])
    const results = ofType(child.events, 'tool/result').map((e) => e.data.errorCode)
    expect(results).toEqual([undefined, 'READ_ONLY_SESSION'])
    expect(await readFile(join(rig.cwd, 'one.txt'), 'utf8')).toBe('1')
  })
})

describe('agent definitions', () => {
  it('are listed by /agents, invalid files named with line and field; the project overrides the user', async () => {
    rig = await subagentRig()
    await mkdir(join(rig.cwd, '.claude', 'agents'), { recursive: true })
    await mkdir(join(rig.home, 'agents'), { recursive: true })
    await writeFile(
      join(rig.cwd, '.claude', 'agents', 'broken.md'),
      '---\nname: broken\ndescription: d\nmaxTurns: lots\n---\nbody\n',
    )
    await writeFile(
      join(rig.cwd, '.claude', 'agents', 'reviewer.md'),
      '---\nname: reviewer\ndescription: project reviewer\n---\nP\n',
    )
    await writeFile(
      join(rig.home, 'agents', 'reviewer.md'),
      '---\nname: reviewer\ndescription: user reviewer\n---\nU\n',
    )
    rig.route(
      PARENT_PROMPT,
      { toolCalls: [task('call_1', 'go', 'broken')] },
      { text: 'that agent is broken' },
    )
    const { agent } = await rig.parent()
    const listing = (await agent.runCommand('agents'))!
    expect(listing).toContain(
      `reviewer (project ${join(rig.cwd, '.claude', 'agents', 'reviewer.md')}): project reviewer`,
    )
    expect(listing).toContain(`reviewer (user ${join(rig.home, 'agents', 'reviewer.md')}) is overridden`)
    expect(listing).toContain(
      `AGENT_DEFINITION_INVALID: ${join(rig.cwd, '.claude', 'agents', 'broken.md')}:4: maxTurns: `,
    )
    expect(agent.tools.find((t) => t.name === 'task')!.description).toContain('- reviewer: project reviewer')
    await agent.send('use the broken agent')
    const result = ofType(agent.session.events, 'tool/result')[0]!.data
    expect(result.errorCode).toBe('AGENT_UNKNOWN')
    expect(result.message.content[0]).toMatchObject({
      text: expect.stringContaining('broken.md:4: maxTurns'),
    })
  })
})
