import { Session, type SessionSeq } from '@keel/session'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  checkTodos,
  renderTodoList,
  type TodoErrorCode,
  type TodoItem,
  type TodoWriteItem,
  todoPlugin,
  todoProjection,
} from '../src/index.js'
import { outputText, PluginDriver } from './helpers.js'

const item = (id: string, status: TodoItem['status'] = 'pending', content = `do ${id}`): TodoWriteItem => ({
  id,
  content,
  status,
})

function expectCode(fn: () => unknown, code: TodoErrorCode): void {
  try {
    fn()
  } catch (error) {
    expect((error as { code?: string }).code, (error as Error).message).toBe(code)
    return
  }
  throw new Error(`expected ${code}, nothing was thrown`)
}

async function driver(
  config: unknown = {},
  session = Session.create('todo'),
): Promise<PluginDriver<unknown>> {
  return (await new PluginDriver(session).setup(todoPlugin as never, config)) as PluginDriver<unknown>
}

describe('checkTodos', () => {
  it('accepts a valid list and drops a blank activeForm', () => {
    expect(
      checkTodos([item('a', 'in_progress'), { ...item('b'), activeForm: ' ' }], { maxInProgress: 1 }),
    ).toEqual([item('a', 'in_progress'), item('b')])
  })

  it('refuses each invalid list with its own code', () => {
    expectCode(() => checkTodos([item('a'), item('a')], { maxInProgress: 1 }), 'TODO_ID_DUPLICATE')
    expectCode(() => checkTodos([item(' ')], { maxInProgress: 1 }), 'TODO_ID_EMPTY')
    expectCode(() => checkTodos([item('a', 'pending', '  ')], { maxInProgress: 1 }), 'TODO_CONTENT_EMPTY')
    expectCode(
      () => checkTodos([item('a', 'in_progress'), item('b', 'in_progress')], { maxInProgress: 1 }),
      'TODO_TOO_MANY_IN_PROGRESS',
    )
  })

  it('allows as many in_progress items as configured', () => {
    const todos = [item('a', 'in_progress'), item('b', 'in_progress')]
    expect(checkTodos(todos, { maxInProgress: 2 })).toHaveLength(2)
  })
})

describe('todo_write', () => {
  it('appends one whole-list snapshot; the projection gives the latest list', async () => {
    const d = await driver()
    d.startTurn()
    await d.step([{ name: 'todo_write', args: { todos: [item('a', 'in_progress'), item('b')] } }])
    await d.step([
      { name: 'todo_write', args: { todos: [item('a', 'completed'), item('b', 'in_progress')] } },
    ])
    d.endTurn()
    expect(d.session.events.filter((e) => e.type === 'todo/write')).toHaveLength(2)
    expect(d.session.project(todoProjection)).toEqual([item('a', 'completed'), item('b', 'in_progress')])
    expect(d.outputs.every((o) => !o.isError)).toBe(true)
  })

  it('answers an invalid list with an error result carrying the code, and writes nothing', async () => {
    const d = await driver()
    d.startTurn()
    const cases: Array<[unknown, string]> = [
      [{ todos: [item('a'), item('a')] }, 'TODO_ID_DUPLICATE'],
      [{ todos: [item('a', 'pending', '')] }, 'TODO_CONTENT_EMPTY'],
      [{ todos: [item('a', 'in_progress'), item('b', 'in_progress')] }, 'TODO_TOO_MANY_IN_PROGRESS'],
      [{ todos: [{ id: 'a', content: 'x', status: 'doing' }] }, 'TOOL_INPUT_INVALID'],
    ]
    for (const [args, code] of cases) {
      const [output] = await d.step([{ name: 'todo_write', args }])
      expect(output!.isError).toBe(true)
      expect(output!.errorCode).toBe(code)
      expect(outputText(output!)).toContain(code)
    }
    expect(d.session.events.some((e) => e.type === 'todo/write')).toBe(false)
    const result = d.session.events.filter((e) => e.type === 'tool/result').map((e) => e.data.errorCode)
    expect(result).toEqual(cases.map(([, code]) => code))
  })

  it('honours maxInProgress from the config', async () => {
    const d = await driver({ maxInProgress: 2 })
    d.startTurn()
    const [output] = await d.step([
      { name: 'todo_write', args: { todos: [item('a', 'in_progress'), item('b', 'in_progress')] } },
    ])
    expect(output!.isError).toBeUndefined()
  })

  it('shows the list to the user when it changes, not when it is rewritten unchanged', async () => {
    const d = await driver()
    d.startTurn()
    const todos = [{ ...item('a', 'in_progress'), activeForm: 'Doing a' }, item('b'), item('c', 'completed')]
    await d.step([{ name: 'todo_write', args: { todos } }])
    await d.step([{ name: 'todo_write', args: { todos } }])
    expect(d.displayed).toEqual([
      { kind: 'todo-list', text: renderTodoList(d.session.project(todoProjection)) },
    ])
    expect(d.displayed[0]!.text).toBe(
      ['Todo list (1/3 done)', '  [>] Doing a', '  [ ] do b', '  [x] do c'].join('\n'),
    )
  })

  it('the event schema refuses a snapshot with duplicate ids appended directly', () => {
    const session = Session.create('direct')
    expect(() => session.append('todo/write', { todos: [item('a'), item('a')] })).toThrowError(
      expect.objectContaining({ code: 'EVENT_DATA_INVALID' }),
    )
  })
})

describe('survival', () => {
  async function planned(): Promise<PluginDriver<unknown>> {
    const d = await driver()
    d.startTurn()
    await d.step([{ name: 'todo_write', args: { todos: [item('a', 'in_progress'), item('b')] } }])
    await d.step([
      { name: 'todo_write', args: { todos: [item('a', 'completed'), item('b', 'in_progress')] } },
    ])
    d.endTurn()
    return d
  }

  it('resume: a session reloaded from its stored events has the same list', async () => {
    const d = await planned()
    const stored = JSON.parse(JSON.stringify(d.session.events)) as unknown[]
    const resumed = Session.create('todo', {}, stored)
    expect(resumed.project(todoProjection)).toEqual(d.session.project(todoProjection))
  })

  it('fork: the child starts with the parent list and then diverges on its own', async () => {
    const d = await planned()
    const listAtFork = d.session.project(todoProjection)
    const child = await driver({}, d.session.fork('child'))
    expect(child.session.project(todoProjection)).toEqual(listAtFork)
    child.startTurn()
    await child.step([{ name: 'todo_write', args: { todos: [item('c')] } }])
    child.endTurn()
    expect(child.session.project(todoProjection)).toEqual([item('c')])
    expect(d.session.project(todoProjection)).toEqual(listAtFork)
  })

  it('fork before the first write: the child starts empty', async () => {
    const d = await driver()
    d.startTurn()
    await d.step()
    d.endTurn()
    const cut = d.session.nextSeq - 1
    d.startTurn()
    await d.step([{ name: 'todo_write', args: { todos: [item('a')] } }])
    d.endTurn()
    expect(d.session.fork('child', cut).project(todoProjection)).toEqual([])
  })

  it('a surface replace of the range holding the todo_write calls keeps the list', async () => {
    const d = await planned()
    const before = d.session.project(todoProjection)
    const surface = d.session.surfaceSeqs()
    const start = surface[0]!
    const end = surface[surface.length - 1]!
    d.session.append(
      'user/message',
      {
        message: {
          role: 'user',
          content: [{ type: 'text', text: 'Summary: the model planned and worked.' }],
        },
      },
      {
        surfaceOp: { op: 'replace', startSeq: start, endSeq: end },
        sourceEventSeqs: surface as SessionSeq[],
      },
    )
    const messages = d.session.deriveMessages()
    expect(messages).toHaveLength(1)
    expect(JSON.stringify(messages)).not.toContain('todo_write')
    expect(d.session.project(todoProjection)).toEqual(before)
    // and a fresh projection over the compacted log agrees
    const reloaded = Session.create('todo', {}, JSON.parse(JSON.stringify(d.session.events)) as unknown[])
    expect(reloaded.project(todoProjection)).toEqual(before)
  })

  it('property: the list is the last valid write, whatever the cuts, forks and reloads', async () => {
    const status = fc.constantFrom<TodoItem['status']>('pending', 'in_progress', 'completed', 'cancelled')
    const list = fc.uniqueArray(fc.record({ id: fc.stringMatching(/^[a-z]{1,4}$/), status }), {
      selector: (t) => t.id,
      maxLength: 5,
    })
    await fc.assert(
      fc.asyncProperty(fc.array(list, { minLength: 1, maxLength: 6 }), fc.nat(), async (writes, cutSeed) => {
        const d = await driver({ maxInProgress: 5 })
        for (const todos of writes) {
          d.startTurn()
          await d.step([{ name: 'todo_write', args: { todos: todos.map((t) => item(t.id, t.status)) } }])
          d.endTurn()
        }
        const last = writes[writes.length - 1]!.map((t) => item(t.id, t.status))
        expect(d.session.project(todoProjection)).toEqual(last)
        const reloaded = Session.create('todo', {}, JSON.parse(JSON.stringify(d.session.events)) as unknown[])
        expect(reloaded.project(todoProjection)).toEqual(last)
        // a fork at any turn boundary sees the last write before the cut
        const ends = d.session.events.filter((e) => e.type === 'turn/end').map((e) => e.seq)
        const k = cutSeed % ends.length
        expect(d.session.fork('child', ends[k]!).project(todoProjection)).toEqual(
          writes[k]!.map((t) => item(t.id, t.status)),
        )
      }),
      { numRuns: 40 },
    )
  })
})
