// `keel fork --preset` and `keel resume --preset`: what works is allowed, what does not says
// what would (child processes against the scripted server, the real JSONL store).
import { JsonlStore } from '@keel/store-jsonl'
import { afterEach, describe, expect, it } from 'vitest'
import { type KeelRig, keelRig, runKeel } from './keel-process.js'

const rigs: KeelRig[] = []
afterEach(async () => {
  for (const rig of rigs.splice(0)) await rig.close()
})

describe('another preset for an existing session', () => {
  it('forks under a preset that knows the history, refuses one that does not (naming the events, leaving no fork), and says so on resume', async () => {
    const r = await keelRig([
      {
        toolCalls: [
          { name: 'todo_write', arguments: { todos: [{ id: 'a', content: 'Read', status: 'in_progress' }] } },
        ],
      },
      { text: 'Planned.' },
      { text: 'Forked under coding.' },
    ])
    rigs.push(r)
    const flags = ['--base-url', r.server.baseURL, '--cwd', r.cwd]
    const first = await runKeel(['-p', 'plan', '--output', 'json', '--preset', 'review', ...flags], {
      env: r.env,
    })
    expect(first.code).toBe(0)
    const id = JSON.parse(first.stdout).session_id as string
    const store = new JsonlStore({ home: r.home })
    const count = async () => (await store.list({})).length
    expect(await count()).toBe(1)

    // minimal runs no todo plugin: refused before anything is forked, naming the event
    const refused = await runKeel(['fork', id, '--preset', 'minimal', '-p', 'x', ...flags], { env: r.env })
    expect(refused.code).toBe(2)
    expect(refused.stderr).toContain('PRESET_SWITCH_UNKNOWN_EVENTS')
    expect(refused.stderr).toContain('todo/write (@keel/todo, 1×)')
    expect(await count()).toBe(1)

    // coding runs every plugin review does: the fork switches to it
    const forked = await runKeel(['fork', id, '--preset', 'coding', '-p', 'go on', ...flags], { env: r.env })
    expect(forked.code).toBe(0)
    expect(forked.stdout).toBe('Forked under coding.\n')
    expect(forked.stderr).toContain('switched to preset coding')
    expect(await count()).toBe(2)

    // resuming the original under another preset says what works
    const resumed = await runKeel(['resume', id, '--preset', 'coding', '-p', 'x', ...flags], { env: r.env })
    expect(resumed.code).toBe(2)
    expect(resumed.stderr).toContain('PRESET_SWITCH_NOT_BLANK')
    expect(resumed.stderr).toContain(`keel fork ${id} --preset coding`)
    await store.close()
  })
})
