import { createAgent, type DisplayNotice, usePlugin } from '@keel/agent'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { fsTools } from '@keel/fs'
import { startScriptedServer } from '@keel/scripted-server'
import { MemoryStore } from '@keel/store'
import { todoPlugin } from '@keel/todo'
import { describe, expect, it } from 'vitest'

// The agent with a real plugin from another package: config validated by its schema, its tool
// offered to the model, its event appended by its tool, its display notice reaching the UI.
describe('a real plugin (@keel/todo) in the agent', () => {
  it('validates its config, offers todo_write, logs todo/write and shows the list', async () => {
    const store = new MemoryStore()
    const bad = await createAgent({
      llm: createDeepSeekAdapter({ baseURL: 'http://127.0.0.1:9', env: {} }),
      session: await store.create(),
      cwd: process.cwd(),
      plugins: [usePlugin(todoPlugin, { maxInProgress: 0 })],
    }).catch((error: unknown) => error)
    expect(bad).toMatchObject({
      code: 'PLUGIN_CONFIG_INVALID',
      details: { plugin: '@keel/todo', path: 'config.maxInProgress' },
    })

    const server = await startScriptedServer({
      script: [
        {
          toolCalls: [
            {
              name: 'todo_write',
              arguments: {
                todos: [
                  { id: '1', content: 'Read the code', status: 'in_progress' },
                  { id: '2', content: 'Fix the bug', status: 'pending' },
                ],
              },
            },
          ],
        },
        { text: 'Planned.' },
      ],
    })
    const notices: DisplayNotice[] = []
    const handle = await store.create()
    const agent = await createAgent({
      llm: createDeepSeekAdapter({ baseURL: server.baseURL, env: {} }),
      session: handle,
      cwd: process.cwd(),
      tools: fsTools(),
      plugins: [todoPlugin],
      observers: [{ onDisplay: (n) => void notices.push(n) }],
    })
    expect(agent.tools[0]!.name).toBe('todo_write')
    const result = await agent.send('Plan the fix.')
    await agent.close()
    await server.close()
    expect(result.reason).toBe('completed')
    const session = await store.load(handle.session.id)
    const types = session.events.map((e) => e.type)
    // the plugin's event lands inside the step, between the call and its result
    expect(types.slice(types.indexOf('tool/call'), types.indexOf('tool/result') + 1)).toEqual([
      'tool/call',
      'todo/write',
      'tool/result',
    ])
    expect(notices).toHaveLength(1)
    expect(notices[0]).toMatchObject({ source: '@keel/todo', kind: 'todo-list' })
    expect(notices[0]!.text).toContain('Fix the bug')
    expect(server.requests[0]!.body!.tools!.map((t) => t.function.name)).toContain('todo_write')
    await store.close()
  })
})
