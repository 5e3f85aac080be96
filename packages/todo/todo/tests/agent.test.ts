import { createAgent, usePlugin } from '@keel/agent'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { type ScriptedResponse, type ScriptedServer, startScriptedServer } from '@keel/scripted-server'
import { Session, type SessionSeq } from '@keel/session'
import { defineTool } from '@keel/tools'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { TODO_REMINDER_SOURCE, todoPlugin, todoProjection } from '../src/index.js'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

/** A harmless tool so the scripted model can keep a turn going without touching its list. */
const work = defineTool({
  name: 'work',
  description: 'Does a unit of work.',
  inputSchema: z.strictObject({}),
  annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
  async call() {
    return 'done'
  },
})

async function agentFor(script: ScriptedResponse[], session: Session, config: unknown = {}) {
  const server: ScriptedServer = await startScriptedServer({ script })
  const displayed: string[] = []
  const agent = await createAgent({
    llm: createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted-model', env: {} }),
    session,
    cwd: process.cwd(),
    plugins: [usePlugin(todoPlugin, config)],
    tools: [work],
    observers: [{ onDisplay: (n) => displayed.push(`${n.source} ${n.kind}\n${n.text}`) }],
  })
  cleanups.push(async () => {
    await agent.close()
    await server.close()
  })
  return { server, agent, displayed }
}

const write = (todos: unknown[]): ScriptedResponse => ({
  toolCalls: [{ name: 'todo_write', arguments: { todos } }],
})
const doWork: ScriptedResponse = { toolCalls: [{ name: 'work', arguments: {} }] }

/** The chat messages of one recorded request. */
function messagesOf(server: ScriptedServer, index: number): Array<{ role: string; content: string }> {
  return (server.requests[index]!.body as { messages: Array<{ role: string; content: string }> }).messages
}

describe('inside a real agent', () => {
  it('writes, refuses by code, shows the list, and reminds the model after N quiet steps', async () => {
    const session = Session.create('todo-agent')
    const { server, agent, displayed } = await agentFor(
      [
        write([
          { id: 'a', content: 'Read the code', status: 'in_progress', activeForm: 'Reading the code' },
          { id: 'a', content: 'Fix the bug', status: 'pending' },
        ]),
        write([
          { id: 'a', content: 'Read the code', status: 'in_progress', activeForm: 'Reading the code' },
          { id: 'b', content: 'Fix the bug', status: 'pending' },
        ]),
        doWork,
        doWork,
        { text: 'All done.' },
      ],
      session,
      { reminderAfterSteps: 2 },
    )
    const result = await agent.send('Fix the bug.')
    expect(result.text).toBe('All done.')

    const results = session.events.filter((e) => e.type === 'tool/result')
    expect(results[0]!.data.errorCode).toBe('TODO_ID_DUPLICATE')
    expect(session.project(todoProjection).map((t) => t.id)).toEqual(['a', 'b'])
    expect(displayed).toEqual([
      '@keel/todo todo-list\nTodo list (0/2 done)\n  [>] Reading the code\n  [ ] Fix the bug',
    ])

    // steps 3 and 4 passed without a write: the reminder precedes step 5, and the model saw it
    const reminders = session.events.filter(
      (e) => e.type === 'developer/message' && e.data.source === TODO_REMINDER_SOURCE,
    )
    expect(reminders).toHaveLength(1)
    const next = session.events[reminders[0]!.seq + 1]!
    expect(next).toMatchObject({ type: 'step/start', data: { step: 5 } })
    const seen = messagesOf(server, 4).filter((m) => m.role === 'system')
    expect(seen.at(-1)!.content).toContain('Your todo list has not been updated for 2 steps')
    expect(seen.at(-1)!.content).toContain('[in progress] Read the code')
    expect(messagesOf(server, 3).some((m) => m.content.includes('todo list has not been updated'))).toBe(
      false,
    )
  })

  it('a forked child agent starts from the parent list and keeps its own after compaction-like replace', async () => {
    const parent = Session.create('todo-parent')
    const p = await agentFor(
      [write([{ id: 'a', content: 'Plan', status: 'in_progress' }]), { text: 'Planned.' }],
      parent,
    )
    await p.agent.send('Plan it.')

    const child = parent.fork('todo-child')
    const c = await agentFor(
      [write([{ id: 'a', content: 'Plan', status: 'completed' }]), { text: 'Done.' }],
      child,
    )
    expect(child.project(todoProjection)).toEqual([{ id: 'a', content: 'Plan', status: 'in_progress' }])
    await c.agent.send('Finish it.')
    expect(child.project(todoProjection)).toEqual([{ id: 'a', content: 'Plan', status: 'completed' }])
    expect(parent.project(todoProjection)).toEqual([{ id: 'a', content: 'Plan', status: 'in_progress' }])

    // shadow every surface node holding the child's tool calls: the list stays
    const surface = child.surfaceSeqs()
    child.append(
      'user/message',
      { message: { role: 'user', content: [{ type: 'text', text: 'Summary of earlier work.' }] } },
      {
        surfaceOp: { op: 'replace', startSeq: surface[0]!, endSeq: surface.at(-1)! },
        sourceEventSeqs: surface as SessionSeq[],
      },
    )
    expect(JSON.stringify(child.deriveMessages())).not.toContain('todo_write')
    expect(child.project(todoProjection)).toEqual([{ id: 'a', content: 'Plan', status: 'completed' }])
  })
})
