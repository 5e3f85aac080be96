import { KeelError } from '@keel/base'
import { Session } from '@keel/session'
import { describe, expect, it } from 'vitest'
import { createAgent, definePlugin, MAX_COMMAND_TEXT, type PluginCommand } from '../src/index.js'
import { offlineLlm } from '../src/testing.js'

async function agentWith(commands: Record<string, PluginCommand>) {
  const session = Session.create(`commands-${Math.random()}`)
  const plugin = definePlugin({
    name: 'commander',
    setup(ctx) {
      for (const [name, command] of Object.entries(commands)) ctx.registerCommand(name, command)
    },
  })
  const agent = await createAgent({ llm: offlineLlm(), session, cwd: process.cwd(), plugins: [plugin] })
  const logged = () =>
    session.events.flatMap((e) =>
      e.type === 'command/run' || e.type === 'command/done' ? [{ type: e.type, ...e.data }] : [],
    )
  return { agent, session, logged }
}

describe('commands: the host registry, each run logged', () => {
  it('a run is command/run then exactly one command/done with the answer; the list says who offers what', async () => {
    const { agent, logged } = await agentWith({
      greet: { description: 'says hello', usage: '[name]', run: async (args) => `hello ${args || 'you'}` },
      quiet: { description: 'answers nothing', run: async () => {} },
    })
    expect(agent.commands()).toEqual([
      { name: 'greet', description: 'says hello', usage: '[name]', plugin: 'commander' },
      { name: 'quiet', description: 'answers nothing', plugin: 'commander' },
    ])
    expect(await agent.runCommand('greet', 'Ada')).toBe('hello Ada')
    expect(await agent.runCommand('quiet', '', { source: 'plugin/cron' })).toBeUndefined()
    expect(logged()).toEqual([
      { type: 'command/run', commandId: 'cmd-0', name: 'greet', args: 'Ada', source: 'user' },
      { type: 'command/done', commandId: 'cmd-0', kind: 'success', text: 'hello Ada' },
      { type: 'command/run', commandId: 'cmd-2', name: 'quiet', source: 'plugin/cron' },
      { type: 'command/done', commandId: 'cmd-2', kind: 'success' },
    ])
  })

  it('a thrown handler settles as error (its own code, or COMMAND_FAILED with the cause), and so does an abort', async () => {
    let started: () => void = () => {}
    const waiting = new Promise<void>((resolve) => {
      started = resolve
    })
    const { agent, logged } = await agentWith({
      broken: {
        description: 'throws',
        run: async () => {
          throw new Error('disk on fire')
        },
      },
      typed: {
        description: 'throws a KeelError',
        run: async () => {
          throw new KeelError('NOTES_FULL', 'the notes are full')
        },
      },
      hang: {
        description: 'never answers on its own',
        run: (_args, { signal }) => {
          started()
          return new Promise((_, reject) =>
            signal.addEventListener('abort', () => reject(new Error('stopped'))),
          )
        },
      },
    })
    await expect(agent.runCommand('broken')).rejects.toMatchObject({
      code: 'COMMAND_FAILED',
      cause: { message: 'disk on fire' },
    })
    await expect(agent.runCommand('typed')).rejects.toMatchObject({ code: 'NOTES_FULL' })
    const controller = new AbortController()
    const hung = agent.runCommand('hang', '', { signal: controller.signal })
    await waiting
    controller.abort()
    await expect(hung).rejects.toMatchObject({ code: 'COMMAND_ABORTED' })
    const done = logged().filter((e) => e.type === 'command/done')
    expect(done).toEqual([
      expect.objectContaining({
        kind: 'error',
        errorCode: 'COMMAND_FAILED',
        text: expect.stringContaining('disk on fire'),
      }),
      expect.objectContaining({ kind: 'error', errorCode: 'NOTES_FULL', text: 'the notes are full' }),
      expect.objectContaining({ kind: 'error', errorCode: 'COMMAND_ABORTED' }),
    ])
    expect(logged().filter((e) => e.type === 'command/run')).toHaveLength(3)
  })

  it('an unknown name is refused and logs nothing; a long answer is cut in the log, whole for the caller', async () => {
    const long = 'x'.repeat(MAX_COMMAND_TEXT + 500)
    const { agent, logged } = await agentWith({ dump: { description: 'a lot', run: async () => long } })
    await expect(agent.runCommand('nope')).rejects.toMatchObject({ code: 'COMMAND_UNKNOWN' })
    // a pasted megabyte of a name is not echoed back whole, in the message or the details
    const refused = await agent.runCommand('n'.repeat(1_000_000)).catch((error: unknown) => error)
    expect(refused).toMatchObject({ code: 'COMMAND_UNKNOWN' })
    expect(JSON.stringify(refused).length + (refused as Error).message.length).toBeLessThan(2_000)
    expect(logged()).toEqual([])
    expect(await agent.runCommand('dump')).toBe(long)
    const done = logged().find((e) => e.type === 'command/done') as { text: string }
    expect(done.text.length).toBeLessThan(MAX_COMMAND_TEXT + 100)
    expect(done.text).toContain('500 more characters')
  })
})
