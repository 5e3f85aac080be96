import { join } from 'node:path'
import { JsonlStore } from '@keel/store-jsonl'
import { describe, expect, it } from 'vitest'
import { call, dirs, fixtureEntry, mcpRig } from './helpers.js'

describe('resume after the server changed a tool', () => {
  it('the log knows what the last step was sent with; the next step records the change and tells the model', async () => {
    const d = dirs()
    const store = new JsonlStore({ home: join(d.home, 'store') })
    const handle = await store.create({ header: { cwd: d.project } })
    const id = handle.session.id
    const first = await mcpRig({
      ...d,
      session: handle,
      config: { mcpServers: { fx: fixtureEntry() } },
      script: [call('c1', 'mcp__fx__echo', { text: 'one' }), { text: 'done' }],
    })
    await first.agent.send('first')
    const before = first
      .events('tool/list-changed')
      .at(-1)!
      .data.tools.find((t) => t.name === 'mcp__fx__echo')!
    await first.agent.close()

    // The server was upgraded while the session was closed: echo takes `message` now.
    const reopened = await store.open(id)
    const second = await mcpRig({
      ...d,
      session: reopened,
      config: { mcpServers: { fx: fixtureEntry('--variant', '2') } },
      script: [call('c2', 'mcp__fx__echo', { message: 'two' }), { text: 'done' }],
    })
    await second.agent.send('second')
    const events = second.session.events
    const turn2 = events.findIndex((e) => e.type === 'turn/start' && e.data.turn === 2)
    const types = events.slice(turn2).map((e) => e.type)
    expect(types.slice(0, 6)).toEqual([
      'turn/start',
      'user/message',
      'mcp/servers',
      'tool/list-changed',
      'developer/message',
      'step/start',
    ])
    const after = second
      .events('tool/list-changed')
      .at(-1)!
      .data.tools.find((t) => t.name === 'mcp__fx__echo')!
    expect(after.digest).not.toBe(before.digest)
    const told = second.events('developer/message').at(-1)!.data
    expect(told.source).toBe('agent/tools')
    expect(told.message.content[0]!.text).toContain('Changed (description or parameters differ')
    expect(told.message.content[0]!.text).toContain('mcp__fx__echo')
    expect(second.notices.join('\n')).toContain(
      "TOOLS_CHANGED: tools of plugin '@keel/mcp': changed mcp__fx__echo",
    )
    expect(second.events('mcp/servers').at(-1)!.data.servers[0]!.server).toEqual({
      name: 'keel-fixture',
      version: '1.2.0',
    })
    expect(second.events('tool/result').at(-1)!.data.message.content).toEqual([{ type: 'text', text: 'TWO' }])

    // Resumed again with the same server: nothing new is recorded before the step.
    await second.agent.close()
    const third = await mcpRig({
      ...d,
      session: await store.open(id),
      config: { mcpServers: { fx: fixtureEntry('--variant', '2') } },
      script: [{ text: 'quiet' }],
    })
    const count = third.events('tool/list-changed').length
    await third.agent.send('third')
    expect(third.events('tool/list-changed')).toHaveLength(count)
    expect(third.events('mcp/servers')).toHaveLength(second.events('mcp/servers').length)
  })
})
