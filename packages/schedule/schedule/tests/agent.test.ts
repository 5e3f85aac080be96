import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type Agent, type AgentOptions, createAgent, usePlugin } from '@keel/agent'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { type ScriptedResponse, type ScriptedServer, startScriptedServer } from '@keel/scripted-server'
import { Session } from '@keel/session'
import { JsonlStore } from '@keel/store-jsonl'
import { afterEach, describe, expect, it } from 'vitest'
import { schedulePlugin } from '../src/index.js'
import { FakeClock, HOUR, MINUTE, T0 } from './helpers.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function server(script: ScriptedResponse[]): Promise<ScriptedServer> {
  const s = await startScriptedServer({ script })
  cleanups.push(() => s.close())
  return s
}

async function agentOn(
  s: ScriptedServer,
  session: AgentOptions['session'],
  clock: FakeClock,
  displayed: string[] = [],
): Promise<Agent> {
  const agent = await createAgent({
    llm: createDeepSeekAdapter({ baseURL: s.baseURL, model: 'scripted-model', env: {} }),
    session,
    cwd: process.cwd(),
    clock,
    plugins: [usePlugin(schedulePlugin, { timezone: 'UTC' })],
    observers: [{ onDisplay: (n) => displayed.push(`${n.kind}: ${n.text}`) }],
  })
  cleanups.push(() => agent.close())
  return agent
}

/** The text of the last user message of a recorded chat request. */
function lastUserText(s: ScriptedServer, index: number): string {
  const messages = (s.requests[index]!.body as { messages: Array<{ role: string; content: string }> })
    .messages
  return messages.filter((m) => m.role === 'user').at(-1)!.content
}

const createCall = (args: Record<string, unknown>): ScriptedResponse => ({
  toolCalls: [{ name: 'schedule_create', arguments: args }],
})

describe('inside a real agent', () => {
  it('a due schedule arrives as a new turn with source schedule/<id>, after its dispatch', async () => {
    const s = await server([
      createCall({ kind: 'after', when: '10m', prompt: 'Check the oven.' }),
      { text: 'Reminder set.' },
      { text: 'The oven is fine.' },
    ])
    const clock = new FakeClock(T0)
    const session = Session.create('agent-schedule')
    const displayed: string[] = []
    const agent = await agentOn(s, session, clock, displayed)
    const first = await agent.send('Remind me in 10 minutes to check the oven.')
    expect(first.text).toBe('Reminder set.')
    const result = session.events.find((e) => e.type === 'tool/result')!
    expect(JSON.stringify(result.data)).toContain('s1: after 10m, next 2026-01-05T08:10:00.000Z')

    await clock.advance(10 * MINUTE - 1)
    await agent.idle()
    expect(s.requests).toHaveLength(2)
    await clock.advance(1)
    await agent.idle()

    expect(s.requests).toHaveLength(3)
    expect(lastUserText(s, 2)).toContain('Check the oven.')
    expect(lastUserText(s, 2)).toContain('(Sent by schedule s1, after 10m.)')
    const users = session.events.filter((e) => e.type === 'user/message')
    expect(users.map((e) => e.data.source)).toEqual([undefined, 'schedule/s1'])
    const dispatch = session.events.find((e) => e.type === 'schedule/change' && e.data.op === 'dispatch')!
    expect(dispatch.seq).toBeLessThan(users[1]!.seq)
    expect(displayed).toContain('schedule-fired: Schedule s1 (after 10m) fired.')
  })

  it('a schedule that comes due while a turn runs is queued and runs as the next turn', async () => {
    const s = await server([
      createCall({ kind: 'every', when: '5m', prompt: 'Poll the queue.' }),
      { text: 'Polling every 5 minutes.', delayMs: 0 },
      { text: 'Queue is empty.' },
    ])
    const clock = new FakeClock(T0)
    const session = Session.create('agent-queued')
    const agent = await agentOn(s, session, clock)
    const running = agent.send('Poll the queue every 5 minutes.')
    // let the first model call create the schedule, then move time while the turn is still open
    await new Promise<void>((resolve) => {
      const off = session.subscribe((e) => {
        if (e.type === 'tool/result') {
          off()
          resolve()
        }
      })
    })
    await clock.advance(5 * MINUTE)
    await running
    await agent.idle()
    const turns = session.events.filter((e) => e.type === 'turn/start').length
    expect(turns).toBe(2)
    const users = session.events.filter((e) => e.type === 'user/message')
    expect(users.map((e) => e.data.source)).toEqual([undefined, 'schedule/s1'])
    // it fired inside the first turn, and its turn started only after that one ended
    const firstEnd = session.events.find((e) => e.type === 'turn/end')!
    const dispatch = session.events.find((e) => e.type === 'schedule/change' && e.data.op === 'dispatch')!
    expect(dispatch.seq).toBeLessThan(firstEnd.seq)
    expect(users[1]!.seq).toBeGreaterThan(firstEnd.seq)
  })

  it('resume from a JSONL store: a missed one-shot fires once, late, and never again', async () => {
    const home = mkdtempSync(join(tmpdir(), 'keel-schedule-'))
    cleanups.push(() => rmSync(home, { recursive: true, force: true }))

    // process 1: the model sets a reminder, then the process ends
    const s1 = await server([
      createCall({ kind: 'after', when: '10m', prompt: 'Stand up and stretch.' }),
      { text: 'Set.' },
    ])
    const store1 = new JsonlStore({ home })
    const handle1 = await store1.create({ id: 'resumed' })
    const agent1 = await agentOn(s1, handle1, new FakeClock(T0))
    await agent1.send('Remind me to stretch in 10 minutes.')
    await agent1.close()
    await store1.close()

    // process 2, two hours later
    const s2 = await server([{ text: 'Stretching now.' }])
    const store2 = new JsonlStore({ home })
    cleanups.push(() => store2.close())
    const clock2 = new FakeClock(T0 + 2 * HOUR)
    const agent2 = await agentOn(s2, await store2.open('resumed'), clock2)
    await clock2.advance(0)
    await agent2.idle()
    expect(s2.requests).toHaveLength(1)
    expect(lastUserText(s2, 0)).toContain('Stand up and stretch.')
    expect(lastUserText(s2, 0)).toContain(
      'It was due at 2026-01-05T08:10:00.000Z and is delivered 1h 50m late',
    )
    await agent2.close()
    await store2.close()

    // process 3, later still: nothing left to fire
    const s3 = await server([])
    const store3 = new JsonlStore({ home })
    cleanups.push(() => store3.close())
    const clock3 = new FakeClock(T0 + 5 * HOUR)
    const agent3 = await agentOn(s3, await store3.open('resumed'), clock3)
    await clock3.advance(HOUR)
    await agent3.idle()
    expect(s3.requests).toHaveLength(0)
    await agent3.close()

    const log = await store3.load('resumed')
    const scheduled = log.events.filter((e) => e.type === 'user/message' && e.data.source === 'schedule/s1')
    expect(scheduled).toHaveLength(1)
    const ops = log.events
      .filter((e) => e.type === 'schedule/change')
      .map((e) => (e.data as { op: string }).op)
    expect(ops).toEqual(['create', 'dispatch'])
  })

  it('a reminder due while close() waits for a running turn is not lost: it is not dispatched, and fires on the next open', async () => {
    const home = mkdtempSync(join(tmpdir(), 'keel-schedule-close-'))
    cleanups.push(() => rmSync(home, { recursive: true, force: true }))
    let release: () => void = () => {}
    const gate = new Promise<void>((resolve) => {
      release = resolve
    })
    const answers: ScriptedResponse[] = [
      createCall({ kind: 'after', when: '10m', prompt: 'Check the oven.' }),
      { text: 'Reminder set.' },
      { text: 'Done with the long task.' },
    ]
    let inLongCall: () => void = () => {}
    const longCallStarted = new Promise<void>((resolve) => {
      inLongCall = resolve
    })
    const s1 = await startScriptedServer({
      handler: async (request) => {
        if (request.index === 2) {
          inLongCall()
          await gate // the model is slow: the turn runs while the agent is asked to close
        }
        return answers[request.index]!
      },
    })
    cleanups.push(() => s1.close())
    const store1 = new JsonlStore({ home })
    const clock1 = new FakeClock(T0)
    const displayed: string[] = []
    const agent1 = await agentOn(s1, await store1.create({ id: 'closing' }), clock1, displayed)
    await agent1.send('Remind me in 10 minutes to check the oven.')
    const long = agent1.send('Now do the long task.')
    await longCallStarted
    const closing = agent1.close() // waits for the running turn
    await clock1.advance(10 * MINUTE) // the reminder comes due meanwhile
    release()
    await long
    await closing
    await store1.close()
    expect(displayed.some((d) => d.startsWith('schedule-fired'))).toBe(false)
    expect(displayed).toContainEqual(expect.stringMatching(/^schedule-deferred: Schedule s1 .*next opened/))

    const logged = await new JsonlStore({ home }).load('closing')
    const ops = logged.events
      .filter((e) => e.type === 'schedule/change')
      .map((e) => (e.data as { op: string }).op)
    expect(ops).toEqual(['create']) // not recorded as fired

    // the next open: it fires, late, once
    const s2 = await server([{ text: 'The oven is fine.' }])
    const store2 = new JsonlStore({ home })
    cleanups.push(() => store2.close())
    const clock2 = new FakeClock(T0 + 30 * MINUTE)
    const agent2 = await agentOn(s2, await store2.open('closing'), clock2)
    await clock2.advance(0)
    await agent2.idle()
    expect(s2.requests).toHaveLength(1)
    expect(lastUserText(s2, 0)).toContain('Check the oven.')
    expect(lastUserText(s2, 0)).toContain('is delivered 20m late')
    await agent2.close()
    const final = await store2.load('closing')
    expect(
      final.events.filter((e) => e.type === 'user/message' && e.data.source === 'schedule/s1'),
    ).toHaveLength(1)
  })

  it('after a crash between dispatch and delivery, the next open says which reminder was lost, to the user and in the log', async () => {
    const home = mkdtempSync(join(tmpdir(), 'keel-schedule-lost-'))
    cleanups.push(() => rmSync(home, { recursive: true, force: true }))
    // what a process that died right after firing leaves: the dispatch durable, its turn not
    const store1 = new JsonlStore({ home })
    const handle = await store1.create({ id: 'crashed' })
    handle.session.append('schedule/change', {
      v: 1,
      op: 'create',
      id: 's1',
      prompt: 'Call the plumber.',
      trigger: { kind: 'after', delayMs: 10 * MINUTE },
      createdAt: T0,
    })
    handle.session.append('schedule/change', {
      v: 1,
      op: 'dispatch',
      id: 's1',
      dueAt: T0 + 10 * MINUTE,
      firedAt: T0 + 10 * MINUTE,
    })
    await handle.close()
    await store1.close()

    const s = await server([])
    const store2 = new JsonlStore({ home })
    cleanups.push(() => store2.close())
    const displayed: string[] = []
    const clock = new FakeClock(T0 + HOUR)
    const agent = await agentOn(s, await store2.open('crashed'), clock, displayed)
    await clock.advance(0)
    await agent.idle()
    expect(s.requests).toHaveLength(0) // at most once: not delivered again
    expect(displayed).toEqual([
      expect.stringMatching(
        /^schedule-lost: Schedule s1 \("Call the plumber\."\) fired at 2026-01-05T08:10:00.000Z but its message was never delivered.*It will not fire again\.$/,
      ),
    ])
    await agent.close()
    const log = await store2.load('crashed')
    const lost = log.events.filter((e) => e.type === 'schedule/change' && e.data.op === 'lost')
    expect(lost.map((e) => e.data)).toEqual([
      { v: 1, op: 'lost', id: 's1', dueAt: T0 + 10 * MINUTE, firedAt: T0 + 10 * MINUTE },
    ])
    await store2.close()

    // reported once: the next open says nothing more
    const store3 = new JsonlStore({ home })
    cleanups.push(() => store3.close())
    const again: string[] = []
    const agent3 = await agentOn(
      await server([]),
      await store3.open('crashed'),
      new FakeClock(T0 + 2 * HOUR),
      again,
    )
    await agent3.close()
    expect(again).toEqual([])
  })
})
