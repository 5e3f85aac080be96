import { Session } from '@keel/session'
import { defineTool, type Tool } from '@keel/tools'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { definePlugin, type ToolSet } from '../src/index.js'
import { soloContext } from '../src/testing.js'
import { rigsClosedAfterEach } from './helpers.js'

const open = rigsClosedAfterEach()

function echo(name: string, description = `Echoes for ${name}.`): Tool<unknown> {
  return defineTool({
    name,
    description,
    inputSchema: z.strictObject({ text: z.string() }),
    annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
    call: async (input) => `${name}: ${input.text}`,
  }) as Tool<unknown>
}

/** A plugin whose tool set the test drives from outside (as an MCP client's notifications would). */
function dynamicPlugin(initial: Array<Tool<unknown>>, onSet: (set: ToolSet) => void) {
  return definePlugin({
    name: 'dynamic',
    setup(ctx) {
      const set = ctx.registerToolSet()
      set.replace(initial)
      onSet(set)
    },
  })
}

const offered = (body: unknown): string[] =>
  ((body as { tools?: Array<{ function: { name: string } }> }).tools ?? []).map((t) => t.function.name)

describe('tool sets: tools that change between steps', () => {
  it('a change made during a step is offered from the next step on, logged, and told to the model when a tool went', async () => {
    let set!: ToolSet
    const r = await open(
      [
        { toolCalls: [{ id: 'c1', name: 'alpha', arguments: '{"text":"one"}' }] },
        { toolCalls: [{ id: 'c2', name: 'beta', arguments: '{"text":"two"}' }] },
        { text: 'done' },
      ],
      {
        plugins: [
          dynamicPlugin([echo('alpha')], (s) => {
            set = s
          }),
        ],
        tools: [echo('fixed')],
      },
    )
    // The first call's tool swaps the set mid-step: alpha goes, beta comes.
    const alpha = r.agent.tools.find((t) => t.name === 'alpha')!
    expect(alpha).toBeDefined()
    const swap = r.agent.send('go')
    // Wait until the first request is in, then replace while step 1 runs.
    while (r.server.requests.length < 1) await new Promise((res) => setTimeout(res, 2))
    set.replace([echo('beta')])
    const result = await swap
    expect(result.reason).toBe('completed')
    const bodies = r.server.requests.map((q) => q.body)
    expect(offered(bodies[0])).toEqual(['fixed', 'alpha'])
    expect(offered(bodies[1])).toEqual(['fixed', 'beta'])
    // Step 1 still ran alpha (the tools of a running step never change under it).
    const results = r.events('tool/result').map((e) => e.data.message.content[0])
    expect(results[0]).toMatchObject({ text: 'alpha: one' })
    expect(results[1]).toMatchObject({ text: 'beta: two' })
    const changes = r.events('tool/list-changed').map((e) => e.data)
    expect(changes.map((c) => [c.step, c.plugin, c.tools.map((t) => t.name)])).toEqual([
      [1, 'dynamic', ['alpha']],
      [2, 'dynamic', ['beta']],
    ])
    for (const c of changes) for (const t of c.tools) expect(t.digest).toMatch(/^sha256:[0-9a-f]{64}$/)
    // The first offer is no news; the swap is (alpha is gone).
    const told = r.events('developer/message').map((e) => e.data)
    expect(told).toHaveLength(1)
    expect(told[0]!.source).toBe('agent/tools')
    expect(told[0]!.message.content[0]!.text).toContain('No longer available (do not call them): alpha')
    // Ordered: the record and the note come right before the step they apply to.
    const types = r.types()
    const second = types.indexOf('tool/list-changed', types.indexOf('tool/list-changed') + 1)
    expect(types.slice(second, second + 3)).toEqual(['tool/list-changed', 'developer/message', 'step/start'])
  })

  it('resume compares with the log: a changed tool is logged and told once; an unchanged one writes nothing', async () => {
    const session = Session.create(`tool-sets-resume-${process.pid}`)
    const first = await open([{ text: 'hi' }], {
      session,
      plugins: [dynamicPlugin([echo('alpha'), echo('gamma')], () => {})],
    })
    await first.agent.send('one')
    const stored = Session.create(session.id, {}, JSON.parse(JSON.stringify(session.events)))
    const same = await open([{ text: 'again' }], {
      session: stored,
      plugins: [dynamicPlugin([echo('alpha'), echo('gamma')], () => {})],
    })
    await same.agent.send('two')
    expect(same.events('tool/list-changed')).toHaveLength(1) // only the first session's
    const reloaded = Session.create(session.id, {}, JSON.parse(JSON.stringify(stored.events)))
    const changed = await open([{ text: 'three' }], {
      session: reloaded,
      plugins: [dynamicPlugin([echo('alpha', 'Echoes, now louder.')], () => {})],
    })
    await changed.agent.send('three')
    const last = changed.events('tool/list-changed').at(-1)!.data
    expect(last.tools.map((t) => t.name)).toEqual(['alpha'])
    const note = changed.events('developer/message').at(-1)!.data.message.content[0]!.text
    expect(note).toContain('Changed (description or parameters differ')
    expect(note).toContain('alpha')
    expect(note).toContain('No longer available (do not call them): gamma')
  })

  it('a plugin that recorded tools and is gone from the agent: its tools are recorded as gone', async () => {
    const session = Session.create(`tool-sets-gone-${process.pid}`)
    const first = await open([{ text: 'hi' }], {
      session,
      plugins: [dynamicPlugin([echo('alpha')], () => {})],
    })
    await first.agent.send('one')
    const stored = Session.create(session.id, {}, JSON.parse(JSON.stringify(session.events)))
    const without = await open([{ text: 'again' }], { session: stored })
    await without.agent.send('two')
    expect(without.events('tool/list-changed').at(-1)!.data).toMatchObject({ plugin: 'dynamic', tools: [] })
  })

  it('replace refuses a bad tool or a name another tool has, and keeps the set as it was', async () => {
    let set!: ToolSet
    const r = await open([], {
      plugins: [
        dynamicPlugin([echo('alpha')], (s) => {
          set = s
        }),
      ],
      tools: [echo('fixed')],
    })
    expect(() => set.replace([echo('fixed')])).toThrow(
      expect.objectContaining({ code: 'TOOL_NAME_DUPLICATE' }),
    )
    expect(() => set.replace([echo('bad name')])).toThrow(
      expect.objectContaining({ code: 'TOOL_NAME_INVALID' }),
    )
    expect(() => set.replace([echo('twice'), echo('twice')])).toThrow(
      expect.objectContaining({ code: 'TOOL_NAME_DUPLICATE' }),
    )
    expect(set.current().map((t) => t.name)).toEqual(['alpha'])
    expect(r.agent.tools.map((t) => t.name)).toEqual(['fixed', 'alpha'])
  })

  it('soloContext shows what a plugin put in its set', async () => {
    const session = Session.create('tool-sets-solo')
    let set!: ToolSet
    const plugin = dynamicPlugin([echo('alpha')], (s) => {
      set = s
    })
    const solo = soloContext(plugin as never, undefined, { session })
    await plugin.setup?.(solo.context as never)
    solo.done()
    expect(solo.toolSet().map((t) => t.name)).toEqual(['alpha'])
    set.replace([])
    expect(solo.toolSet()).toEqual([])
  })
})
