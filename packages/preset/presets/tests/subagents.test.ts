import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { usageTotalsProjection } from '@keel/subagents'
import { afterEach, describe, expect, it } from 'vitest'
import { createPresetAgent } from '../src/index.js'
import { EXPLORE, GENERAL, ofType, PARENT_PROMPT, type SubagentRig, subagentRig } from './subagents-rig.js'

let rig: SubagentRig
afterEach(async () => {
  await rig?.close()
})

function task(id: string, args: { description: string; prompt: string; agent?: string }) {
  return { id, name: 'task', arguments: args }
}

describe('the task tool', () => {
  it('runs a child agent in a child session of the same store; its final answer is the result', async () => {
    rig = await subagentRig()
    await writeFile(join(rig.cwd, 'a.txt'), 'function greet() {}\n')
    rig.route(
      PARENT_PROMPT,
      {
        toolCalls: [
          task('call_1', { description: 'find greet', prompt: 'Where is greet defined?', agent: 'explore' }),
        ],
        usage: { promptTokens: 50, completionTokens: 5 },
      },
      { text: 'It is in a.txt.', usage: { promptTokens: 80, completionTokens: 6 } },
    )
    rig.route(
      EXPLORE,
      {
        toolCalls: [{ id: 'c1', name: 'grep', arguments: { pattern: 'greet', path: '.' } }],
        usage: { promptTokens: 100, completionTokens: 10, cacheHitTokens: 64 },
      },
      { text: 'greet is defined in a.txt, line 1.', usage: { promptTokens: 120, completionTokens: 12 } },
    )
    const { agent } = await rig.parent()
    const result = await agent.send('Where is greet?')
    expect(result).toMatchObject({ reason: 'completed', text: 'It is in a.txt.' })

    const events = agent.session.events
    const [spawned] = ofType(events, 'subagent/spawned')
    expect(spawned!.data).toMatchObject({
      turn: 1,
      callId: 'call_1',
      agent: 'explore',
      description: 'find greet',
    })
    const childId = spawned!.data.child
    const toolResult = ofType(events, 'tool/result').find((e) => e.data.message.toolCallId === 'call_1')!
    const resultText = toolResult.data.message.content.map((b) => (b.type === 'text' ? b.text : '')).join('')
    expect(resultText).toContain('greet is defined in a.txt, line 1.')
    expect(resultText).toContain(`[subagent explore · session ${childId} · 2 steps · 242 tokens]`)
    // settled before the result, with the child's whole usage
    const settled = ofType(events, 'subagent/settled')[0]!
    expect(settled.seq).toBeLessThan(toolResult.seq)
    expect(settled.data).toMatchObject({
      callId: 'call_1',
      child: childId,
      outcome: 'completed',
      steps: 2,
      usage: { inputTokens: 220, outputTokens: 22, totalTokens: 242, cacheHitTokens: 64 },
    })
    // the parent's totals are its own calls plus the child's
    expect(agent.session.project(usageTotalsProjection)).toMatchObject({
      inputTokens: 50 + 80 + 220,
      outputTokens: 5 + 6 + 22,
    })

    // the child's header names the parent, turn, call and depth; its composition withholds tools
    const child = await rig.store.load(childId)
    expect(child.header.delegatedBy).toEqual({
      session: agent.session.id,
      turn: 1,
      callId: 'call_1',
      agent: 'explore',
      depth: 1,
    })
    const composition = child.header.agentComposition!
    expect(composition.plugins.map((p) => p.name)).toEqual(['@keel/user-approval', '@keel/todo'])
    expect(composition.toolFilter).toEqual({ only: ['read_file', 'list_dir', 'glob', 'grep', 'bash'] })
    const types = child.events.map((e) => e.type)
    expect(types.slice(0, 4)).toEqual(['system/message', 'sandbox/mode', 'subagent/descriptor', 'turn/start'])
    expect(ofType(child.events, 'sandbox/mode')[0]!.data).toEqual({ sandboxMode: 'read_only' })
    expect(ofType(child.events, 'subagent/descriptor')[0]!.data).toMatchObject({
      agent: 'explore',
      source: 'shipped',
      description: 'find greet',
      tools: ['read_file', 'list_dir', 'glob', 'grep', 'bash'],
      policy: { approvalPolicy: 'on_request', sandboxMode: 'read_only' },
    })
    expect(child.events.at(-1)!.data).toMatchObject({ reason: 'completed' })

    // what the server received: the child saw its own prompt and only its tools; the parent got the answer
    const [childFirst] = rig.requestsOf(EXPLORE)
    expect(childFirst!.body!.tools!.map((t) => t.function.name)).toEqual([
      'read_file',
      'list_dir',
      'glob',
      'grep',
      'bash',
    ])
    expect(childFirst!.body!.messages!.at(-1)).toMatchObject({
      role: 'user',
      content: 'Where is greet defined?',
    })
    expect(rig.requestsOf(PARENT_PROMPT)[0]!.body!.tools!.map((t) => t.function.name)).toContain('task')
    const parentSecond = rig.requestsOf(PARENT_PROMPT)[1]!.body!.messages!
    expect(parentSecond.find((m) => m.role === 'tool')?.content).toContain(
      'greet is defined in a.txt, line 1.',
    )

    // the store lists the child under its parent
    const summaries = await rig.store.list()
    expect(summaries.find((s) => s.id === childId)?.delegatedBy?.session).toBe(agent.session.id)

    // the child's log is resumable on its own, with the same tools
    await agent.close()
    rig.route(EXPLORE, { text: 'Nowhere else.' })
    const resumed = await createPresetAgent({
      llm: rig.llm,
      cwd: rig.cwd,
      store: rig.store,
      session: await rig.store.open(childId),
    })
    expect(resumed.origin).toBe('rebuilt')
    expect(resumed.agent.tools.map((t) => t.name)).toEqual(['read_file', 'list_dir', 'glob', 'grep', 'bash'])
    expect(await resumed.agent.send('Anywhere else?')).toMatchObject({
      reason: 'completed',
      text: 'Nowhere else.',
    })
    await resumed.agent.close()
  })

  it('runs several task calls of one step in parallel, results in model order', async () => {
    rig = await subagentRig()
    let arrived = 0
    let release!: () => void
    const bothArrived = new Promise<void>((resolve) => {
      release = resolve
    })
    const child = (answer: string) => async () => {
      arrived += 1
      if (arrived === 2) release()
      // a child answers only once both children have asked: serial runs would never get here
      await Promise.race([
        bothArrived,
        new Promise((_, reject) =>
          setTimeout(() => reject(new Error('the children did not run in parallel')), 15_000),
        ),
      ])
      return { text: answer }
    }
    rig.route(
      PARENT_PROMPT,
      {
        toolCalls: [
          task('call_a', { description: 'first', prompt: 'Say A' }),
          task('call_b', { description: 'second', prompt: 'Say B' }),
        ],
      },
      { text: 'both done' },
    )
    rig.route(GENERAL, child('A'), child('B'))
    const { agent } = await rig.parent()
    expect(await agent.send('do two things')).toMatchObject({ reason: 'completed', text: 'both done' })
    const results = ofType(agent.session.events, 'tool/result').map((e) => e.data.message)
    expect(results.map((m) => m.toolCallId)).toEqual(['call_a', 'call_b'])
    expect(results.every((m) => !m.isError)).toBe(true)
    const children = ofType(agent.session.events, 'subagent/spawned').map((e) => e.data.child)
    expect(new Set(children).size).toBe(2)
    expect(ofType(agent.session.events, 'subagent/settled').map((e) => e.data.outcome)).toEqual([
      'completed',
      'completed',
    ])
  })

  it('maxConcurrent bounds the children running at once; the others wait for a slot', async () => {
    rig = await subagentRig()
    let active = 0
    let most = 0
    const child = (answer: string) => async () => {
      active += 1
      most = Math.max(most, active)
      await new Promise((resolve) => setTimeout(resolve, 100))
      active -= 1
      return { text: answer }
    }
    rig.route(
      PARENT_PROMPT,
      {
        toolCalls: [
          task('call_a', { description: 'a', prompt: 'Say A' }),
          task('call_b', { description: 'b', prompt: 'Say B' }),
          task('call_c', { description: 'c', prompt: 'Say C' }),
        ],
      },
      { text: 'all done' },
    )
    rig.route(GENERAL, child('A'), child('B'), child('C'))
    const { agent } = await rig.parent({ subagents: { maxConcurrent: 1 } })
    expect(await agent.send('three things')).toMatchObject({ reason: 'completed', text: 'all done' })
    expect(most).toBe(1)
    expect(ofType(agent.session.events, 'subagent/settled').map((e) => e.data.outcome)).toEqual([
      'completed',
      'completed',
      'completed',
    ])
  })

  it('with maxDepth 2 a child delegates in turn; the grandchild cannot; usage adds up the whole tree', async () => {
    rig = await subagentRig()
    rig.route(
      PARENT_PROMPT,
      {
        toolCalls: [task('call_p', { description: 'research', prompt: 'Research it' })],
        usage: { promptTokens: 10, completionTokens: 1 },
      },
      { text: 'researched', usage: { promptTokens: 10, completionTokens: 1 } },
    )
    rig.route(
      GENERAL,
      {
        toolCalls: [task('call_c', { description: 'look', prompt: 'Look around', agent: 'explore' })],
        usage: { promptTokens: 100, completionTokens: 10 },
      },
      { text: 'child done', usage: { promptTokens: 100, completionTokens: 10 } },
    )
    rig.route(EXPLORE, { text: 'grandchild done', usage: { promptTokens: 1000, completionTokens: 100 } })
    const { agent } = await rig.parent({ subagents: { maxDepth: 2 } })
    expect(await agent.send('go deep')).toMatchObject({ reason: 'completed', text: 'researched' })
    const childId = ofType(agent.session.events, 'subagent/spawned')[0]!.data.child
    const child = await rig.store.load(childId)
    expect(child.header.agentComposition!.plugins.map((p) => p.name)).toContain('@keel/subagents')
    const grandchildId = ofType(child.events, 'subagent/spawned')[0]!.data.child
    const grandchild = await rig.store.load(grandchildId)
    expect(grandchild.header.delegatedBy).toMatchObject({ session: childId, callId: 'call_c', depth: 2 })
    expect(grandchild.header.agentComposition!.plugins.map((p) => p.name)).not.toContain('@keel/subagents')
    expect(rig.requestsOf(GENERAL)[0]!.body!.tools!.map((t) => t.function.name)).toContain('task')
    expect(rig.requestsOf(EXPLORE)[0]!.body!.tools!.map((t) => t.function.name)).not.toContain('task')
    expect(ofType(agent.session.events, 'subagent/settled')[0]!.data.usage).toMatchObject({
      inputTokens: 1200,
      outputTokens: 120,
    })
    expect(agent.session.project(usageTotalsProjection)).toMatchObject({
      inputTokens: 1220,
      outputTokens: 122,
    })
  })

  it("the parent's abort aborts the child; the call is TOOL_ABORTED and the child's turn ends aborted", async () => {
    rig = await subagentRig()
    const controller = new AbortController()
    rig.route(PARENT_PROMPT, {
      toolCalls: [task('call_1', { description: 'slow', prompt: 'Take your time' })],
    })
    rig.route(GENERAL, () => {
      setTimeout(() => controller.abort(), 50)
      return { text: 'never delivered', fault: { type: 'stall', afterChunks: 1 } }
    })
    const { agent } = await rig.parent()
    const result = await agent.send('delegate something slow', { signal: controller.signal })
    expect(result.reason).toBe('aborted')
    const events = agent.session.events
    const toolResult = ofType(events, 'tool/result')[0]!
    expect(toolResult.data.errorCode).toBe('TOOL_ABORTED')
    const settled = ofType(events, 'subagent/settled')[0]!
    expect(settled.data.outcome).toBe('aborted')
    const child = await rig.store.load(settled.data.child)
    expect(child.events.at(-1)!.data).toMatchObject({ reason: 'aborted' })
    await rig.server.settled()
    expect(rig.requestsOf(GENERAL)[0]!.outcome).toBe('client-closed')
  })
})
