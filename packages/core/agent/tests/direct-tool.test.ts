import { defineTool } from '@keel/tools'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { type AgentError, definePlugin } from '../src/index.js'
import { answerWith } from '../src/testing.js'
import { recorder, rigsClosedAfterEach } from './helpers.js'

const open = rigsClosedAfterEach()

function shellLike(log: string[]) {
  return defineTool({
    name: 'sh',
    description: 'Runs a command.',
    inputSchema: z.strictObject({ command: z.string() }),
    annotations: { readOnly: false, destructive: true, openWorld: false, idempotent: false },
    facts: (input) => ({ command: input.command }),
    async call(input, context) {
      log.push(input.command)
      if (input.command === 'wait') {
        await new Promise((resolve) => context.signal.addEventListener('abort', resolve, { once: true }))
        return 'stopped'
      }
      return `ran ${input.command}`
    },
  })
}

const asker = definePlugin({
  name: 'asker',
  setup(ctx) {
    ctx.intercept({ beforeTool: () => ({ action: 'ask', reason: 'asks about everything' }) })
  },
})

describe('agent.runTool: a tool a person runs directly, outside a model call', () => {
  it('runs right after a sent turn resolved: whoever hears of its end finds the agent idle', async () => {
    const log: string[] = []
    const r = await open([{ text: 'Done.' }], { tools: [shellLike(log)] })
    const turn = await r.agent.send('hello')
    expect(turn.reason).toBe('completed')
    expect(r.agent.busy).toBe(false)
    const done = await r.agent.runTool('sh', { command: 'ls' })
    expect(done.ran).toBe(true)
    expect(log).toEqual(['ls'])
  })

  it('runs through the permission chain, logged as its own turn, and tells the model on its next call', async () => {
    const log: string[] = []
    const rec = recorder()
    const r = await open([{ text: 'I see the listing.' }], {
      tools: [shellLike(log)],
      plugins: [asker],
      answerers: [answerWith(() => 'allow')],
      observers: [rec],
    })
    const done = await r.agent.runTool('sh', { command: 'ls' })
    expect(done).toMatchObject({ turn: 1, callId: 'direct_1', ran: true, aborted: false })
    expect(done.result.content).toEqual([{ type: 'text', text: 'ran ls' }])
    expect(log).toEqual(['ls'])
    expect(r.types().filter((t) => t !== 'system/message')).toEqual([
      'turn/start',
      'step/start',
      'tool/direct-call',
      'approval/asked',
      'approval/decided',
      'tool/direct-result',
      'step/end',
      'user/message',
      'turn/end',
    ])
    expect(r.events('tool/direct-call')[0]!.data).toEqual({
      turn: 1,
      step: 1,
      callId: 'direct_1',
      name: 'sh',
      arguments: '{"command":"ls"}',
      source: 'user',
    })
    expect(r.events('user/message')[0]!.data.source).toBe('direct/sh')
    expect(rec.log).toEqual(['start direct_1', 'finish direct_1'])
    // the next turn's request carries what the person ran, and no fabricated tool call
    await r.agent.send('what did you see?')
    const messages = JSON.stringify(r.server.requests[0]!.body?.messages)
    expect(messages).toContain('I ran `ls` with the sh tool myself')
    expect(messages).toContain('ran ls')
    expect(messages).not.toContain('tool_calls')
  })

  it('a refused run is a result with refusedBy, and tells the model nothing', async () => {
    const log: string[] = []
    const r = await open([], {
      tools: [shellLike(log)],
      plugins: [asker],
      answerers: [answerWith(() => 'deny')],
    })
    const done = await r.agent.runTool('sh', { command: 'rm -rf /' })
    expect(done).toMatchObject({ ran: false, errorCode: 'USER_REJECTED', refusedBy: 'asker' })
    expect(log).toEqual([])
    expect(r.events('tool/direct-result')[0]!.data).toMatchObject({
      errorCode: 'USER_REJECTED',
      refusedBy: 'asker',
    })
    expect(r.events('user/message')).toHaveLength(0)
    expect(r.events('turn/end')[0]!.data).toEqual({ turn: 1, reason: 'completed' })
  })

  it('abort stops a running direct tool; the turn ends aborted; invalid input is a result', async () => {
    const log: string[] = []
    const r = await open([], { tools: [shellLike(log)] })
    const controller = new AbortController()
    const pending = r.agent.runTool('sh', { command: 'wait' }, { signal: controller.signal })
    await r.agent.runTool('sh', { command: 'x' }).then(
      () => expect.unreachable(),
      (error: unknown) => expect((error as AgentError).code).toBe('AGENT_BUSY'),
    )
    while (log.length === 0) await new Promise((resolve) => setImmediate(resolve))
    controller.abort()
    const done = await pending
    expect(done.aborted).toBe(true)
    expect(r.events('turn/end').map((e) => e.data.reason)).toEqual(['aborted'])
    expect(r.events('user/message')).toHaveLength(0)
    const bad = await r.agent.runTool('sh', { cmd: 'ls' })
    expect(bad).toMatchObject({ ran: false, errorCode: 'TOOL_INPUT_INVALID' })
    const unknown = await r.agent.runTool('nope', {})
    expect(unknown.errorCode).toBe('TOOL_NOT_FOUND')
    expect(r.session.openTurn).toBeNull()
  })
})
