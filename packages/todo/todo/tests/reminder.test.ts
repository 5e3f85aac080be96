import { Session } from '@keel/session'
import { describe, expect, it } from 'vitest'
import { TODO_REMINDER_SOURCE, type TodoItem, todoActivityProjection, todoPlugin } from '../src/index.js'
import { PluginDriver } from './helpers.js'

const item = (id: string, status: TodoItem['status'] = 'pending') => ({ id, content: `do ${id}`, status })

async function driver(config: unknown, session = Session.create('todo')): Promise<PluginDriver<unknown>> {
  return (await new PluginDriver(session).setup(todoPlugin as never, config)) as PluginDriver<unknown>
}

/** The step numbers (of the turn each belongs to) that a reminder preceded, as `turn.step`. */
function remindedBefore(session: Session): string[] {
  const out: string[] = []
  const events = session.events
  events.forEach((e, i) => {
    if (e.type !== 'developer/message' || e.data.source !== TODO_REMINDER_SOURCE) return
    const next = events[i + 1]
    if (next?.type === 'step/start') out.push(`${next.data.turn}.${next.data.step}`)
  })
  return out
}

describe('reminder', () => {
  it('is injected after N steps without a todo_write, then every N steps, and lists the open items', async () => {
    const d = await driver({ reminderAfterSteps: 3 })
    d.startTurn()
    await d.step([
      { name: 'todo_write', args: { todos: [item('a', 'in_progress'), item('b'), item('c', 'completed')] } },
    ])
    for (let i = 0; i < 7; i++) await d.step()
    d.endTurn()
    // steps 2, 3, 4 pass without an update → reminder before step 5; steps 5, 6, 7 → before step 8
    expect(remindedBefore(d.session)).toEqual(['1.5', '1.8'])
    const reminder = d.session.events.find((e) => e.type === 'developer/message')!
    const text = JSON.stringify(reminder.data)
    expect(text).toContain('[in progress] do a')
    expect(text).toContain('[pending] do b')
    expect(text).not.toContain('do c')
  })

  it('resets when the model writes the list, and counts steps across turns', async () => {
    const d = await driver({ reminderAfterSteps: 2 })
    d.startTurn()
    await d.step([{ name: 'todo_write', args: { todos: [item('a')] } }])
    await d.step()
    d.endTurn()
    d.startTurn()
    await d.step([{ name: 'todo_write', args: { todos: [item('a', 'in_progress')] } }]) // no reminder yet: 1 step
    await d.step()
    await d.step()
    await d.step() // 2 steps since the write → reminder before this one
    d.endTurn()
    expect(remindedBefore(d.session)).toEqual(['2.4'])
  })

  it('stays quiet when nothing is open, and when turned off', async () => {
    const done = await driver({ reminderAfterSteps: 1 })
    done.startTurn()
    await done.step([
      { name: 'todo_write', args: { todos: [item('a', 'completed'), item('b', 'cancelled')] } },
    ])
    for (let i = 0; i < 4; i++) await done.step()
    expect(remindedBefore(done.session)).toEqual([])

    const off = await driver({ reminderAfterSteps: 0 })
    off.startTurn()
    await off.step([{ name: 'todo_write', args: { todos: [item('a')] } }])
    for (let i = 0; i < 4; i++) await off.step()
    expect(remindedBefore(off.session)).toEqual([])
  })

  it('counts from the log: a resumed session continues the count where the old process stopped', async () => {
    const d = await driver({ reminderAfterSteps: 3 })
    d.startTurn()
    await d.step([{ name: 'todo_write', args: { todos: [item('a')] } }])
    await d.step()
    await d.step()
    d.endTurn()
    const resumed = await driver(
      { reminderAfterSteps: 3 },
      Session.create('todo', {}, JSON.parse(JSON.stringify(d.session.events))),
    )
    expect(resumed.session.project(todoActivityProjection).stepsSinceWrite).toBe(2)
    resumed.startTurn()
    await resumed.step() // third step without an update
    await resumed.step() // reminded before this one
    resumed.endTurn()
    expect(remindedBefore(resumed.session)).toEqual(['2.2'])
  })

  it('the step that wrote the list does not count as a step without an update', () => {
    const s = Session.create('fold')
    s.append('turn/start', { turn: 1 })
    s.append('step/start', { turn: 1, step: 1 })
    s.append('todo/write', { todos: [item('a')] })
    s.append('step/end', { turn: 1, step: 1 })
    expect(s.project(todoActivityProjection).stepsSinceWrite).toBe(0)
    s.append('step/start', { turn: 1, step: 2 })
    s.append('step/end', { turn: 1, step: 2 })
    expect(s.project(todoActivityProjection).stepsSinceWrite).toBe(1)
  })
})
