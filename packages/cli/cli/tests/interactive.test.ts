import { existsSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { JsonlStore } from '@keel/store-jsonl'
import { afterEach, describe, expect, it } from 'vitest'
import { runCli } from '../src/index.js'
import { type KeelRig, keelRig, writeAskingPreset } from './keel-process.js'
import { idle, KeelPty } from './pty.js'

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function setup(script: Parameters<typeof keelRig>[0]): Promise<KeelRig> {
  const r = await keelRig(script)
  cleanups.push(() => r.close())
  await writeAskingPreset(r.home)
  return r
}

function open(r: KeelRig, args: string[]): KeelPty {
  const pty = new KeelPty([...args, '--base-url', r.server.baseURL, '--cwd', r.cwd], r.env, r.cwd)
  cleanups.push(() => pty.kill())
  return pty
}

describe('interactive keel in a real pseudo-terminal', { timeout: 180_000 }, () => {
  it('streams the answer, asks before a shell command (allow once, then reject with a reason), /todo and /policy', async () => {
    const r = await setup([
      {
        reasoning: 'A file must be written with the shell.',
        text: 'I will write it.',
        toolCalls: [
          {
            name: 'todo_write',
            arguments: { todos: [{ id: 'w', content: 'Write out.txt', status: 'in_progress' }] },
          },
          { name: 'bash', arguments: { command: 'echo approved > out.txt' } },
        ],
      },
      { text: 'The file is written.' },
      { text: 'Trying again.', toolCalls: [{ name: 'bash', arguments: { command: 'rm out.txt' } }] },
      { text: 'Understood, I left it.' },
    ])
    const pty = open(r, ['--preset', 'asking'])
    await pty.waitFor('›')
    expect(pty.screen).toContain('preset asking')
    pty.write('write the file\r')
    await pty.waitFor('Allow bash?')
    expect(pty.screen).toContain('echo approved > out.txt')
    expect(pty.screen).toContain('[y] allow once')
    expect(pty.screen).toContain('A file must be written') // reasoning, shown dimmed
    expect(pty.screen).toContain('Write out.txt') // the todo list on change
    pty.write('y')
    await pty.waitFor('The file is written.')
    await idle(pty)
    expect(await readFile(join(r.cwd, 'out.txt'), 'utf8')).toBe('approved\n')

    let mark = pty.screen.length
    pty.write('clean up\r')
    await pty.waitFor('Allow bash?', 60_000, mark)
    pty.write('n')
    await pty.waitFor('reason for rejecting', 60_000, mark)
    pty.write('keep the file\r')
    await pty.waitFor('Understood, I left it.', 60_000, mark)
    await idle(pty)
    expect(existsSync(join(r.cwd, 'out.txt'))).toBe(true)
    expect(JSON.stringify(r.server.requests[3]!.body?.messages)).toContain('keep the file')

    mark = pty.screen.length
    pty.write('/todo\r')
    await pty.waitFor('Write out.txt', 60_000, mark)
    pty.write('/policy strict\r')
    await pty.waitFor('approval policy set to strict', 60_000, mark)
    await idle(pty)
    pty.write('\x04') // Ctrl-D on an empty line leaves
    expect(await pty.exitCode()).toBe(0)

    const [summary] = await new JsonlStore({ home: r.home }).list({ limit: 1 })
    const events = (await new JsonlStore({ home: r.home }).load(summary!.id)).events
    const decided = events.filter((e) => e.type === 'approval/decided').map((e) => e.data)
    expect(decided).toEqual([
      expect.objectContaining({ outcome: 'allowed-once', by: 'user' }),
      expect.objectContaining({ outcome: 'rejected', by: 'user', reason: 'keep the file' }),
    ])
    expect(events.some((e) => e.type === 'approval/policy')).toBe(true)
  })

  it('Ctrl-C once aborts the running turn and keeps keel open; a second Ctrl-C exits 130', async () => {
    const r = await setup([
      { text: `slow ${'word '.repeat(400)}`, chunking: { text: 5 }, delayMs: 40 },
      { text: 'after' },
    ])
    const pty = open(r, ['--preset', 'minimal'])
    await pty.waitFor('›')
    pty.write('go slowly\r')
    await pty.waitFor('working…')
    await pty.waitFor('slow word')
    pty.write('\x03')
    await pty.waitFor('aborted')
    await pty.waitFor('press Ctrl-C again within 2 s to exit')
    // still running: a new turn works (a typo fixed with backspace on the way)
    pty.write('x')
    pty.write('\x7f')
    pty.write('next\r')
    await pty.waitFor('> next')
    await pty.waitFor('after', 60_000, pty.screen.lastIndexOf('> next'))
    await idle(pty)
    const mark = pty.screen.length
    pty.write('\x03')
    await pty.waitFor('press Ctrl-C again within 2 s to exit', 60_000, mark)
    pty.write('\x03')
    expect(await pty.exitCode()).toBe(130)
    const [summary] = await new JsonlStore({ home: r.home }).list({ limit: 1 })
    const ends = (await new JsonlStore({ home: r.home }).load(summary!.id)).events.filter(
      (e) => e.type === 'turn/end',
    )
    expect(ends.map((e) => e.data.reason)).toEqual(['aborted', 'completed'])
  })

  it('resume opens the recorded session interactively', async () => {
    const r = await setup([{ text: 'first answer' }, { text: 'second answer' }])
    const first = open(r, ['--preset', 'minimal'])
    await first.waitFor('›')
    first.write('hello\r')
    await first.waitFor('first answer')
    await idle(first)
    first.write('\x04')
    expect(await first.exitCode()).toBe(0)
    const again = open(r, ['resume', '--last'])
    await again.waitFor('›')
    expect(again.screen).toContain('rebuilt the recorded preset minimal')
    again.write('more\r')
    await again.waitFor('second answer')
    await idle(again)
    again.write('\x04')
    expect(await again.exitCode()).toBe(0)
    expect(JSON.stringify(r.server.requests[1]!.body?.messages)).toContain('first answer')
  })

  it('the header’s long preset line goes on indented under it, not at column 0', async () => {
    const r = await setup([])
    const pty = open(r, ['--preset', 'coding'])
    await pty.ready('› ')
    const rows = await pty.rows()
    const preset = rows.findIndex((row) => row.startsWith('preset coding:'))
    expect(rows[preset + 1], rows.join('\n')).toMatch(/^ {2}@keel\//u)
    pty.write('\x04')
    expect(await pty.exitCode()).toBe(0)
  })

  it('the model’s title is on disk once it is shown: keel sessions list elsewhere has it while keel runs', async () => {
    const r = await setup([{ text: 'hello back' }, { text: 'Greeting the user', delayMs: 300 }])
    const pty = open(r, ['--preset', 'coding'])
    await pty.waitFor('› ')
    pty.write('hi\r')
    await pty.waitFor('titled the session: Greeting the user')
    const out: string[] = []
    const listed = await runCli(['sessions', 'list'], {
      env: r.env,
      out: (t) => void out.push(t),
      err: () => {},
    })
    expect(listed).toBe(0)
    expect(out.join('')).toContain('Greeting the user')
    await idle(pty)
    pty.write('\x04')
    expect(await pty.exitCode()).toBe(0)
  })

  it('slash commands of the coding preset: /help, /preset, /sandbox, /compact', async () => {
    // After the first turn @keel/session-title asks for a title: scripted like any other request.
    const r = await setup([{ text: 'hello back' }, { text: 'Greeting' }, { text: 'pasted ok' }])
    const pty = open(r, ['--preset', 'coding'])
    await pty.waitFor('› ')
    pty.write('hi\r')
    await pty.waitFor('hello back')
    await idle(pty)
    pty.write('/help\r')
    await pty.waitFor('/sandbox [read_only|workspace_write|danger_full_access]')
    pty.write('/preset\r')
    await pty.waitFor('A blank session switches with')
    pty.write('/sandbox read_only\r')
    await pty.waitFor('sandbox mode set to read_only')
    pty.write('/sandbox\r')
    await pty.waitFor('approval policy on_request, sandbox mode read_only')
    pty.write('/compact\r')
    await pty.waitFor(
      /Compacted: [\d,]+ → [\d,]+ tokens|Nothing was compacted|Compaction (skipped|cancelled|failed)|A compaction is already running/u,
    )
    pty.write('/nope\r')
    await pty.waitFor('unknown command /nope; /help lists them')
    pty.write('/compcat\r')
    await pty.waitFor('unknown command /compcat; did you mean /compact? (/help lists them)')
    // a pasted run of 2,000 characters as a command name is not echoed back whole
    pty.write(`/${'n'.repeat(2000)}\r`)
    await pty.waitFor(/unknown\s+command\s+\/[n\s]+…\[1,760\s+characters\s+elided\]…/u)
    // a multi-line paste joins the input and waits for Enter: one message, newlines kept
    pty.write('first line\nsecond line')
    await pty.waitFor('second line')
    pty.write('\r')
    await pty.waitFor('pasted ok')
    await idle(pty)
    pty.write('\x04')
    expect(await pty.exitCode()).toBe(0)
    const [summary] = await new JsonlStore({ home: r.home }).list({ limit: 1 })
    const events = (await new JsonlStore({ home: r.home }).load(summary!.id)).events
    expect(events.filter((e) => e.type === 'sandbox/mode').map((e) => e.data)).toEqual([
      { sandboxMode: 'read_only' },
    ])
    // the plugins' commands ran through the agent's registry, each a logged run with one answer
    const runs = events.flatMap((e) => (e.type === 'command/run' ? [e.data] : []))
    expect(runs.map((r) => [r.name, r.args, r.source])).toEqual([
      ['sandbox', 'read_only', 'user'],
      ['sandbox', undefined, 'user'],
      ['compact', undefined, 'user'],
    ])
    const done = events.flatMap((e) => (e.type === 'command/done' ? [e.data] : []))
    expect(done.map((d) => d.commandId)).toEqual(runs.map((r) => r.commandId))
    expect(done[0]).toMatchObject({ kind: 'success', text: 'sandbox mode set to read_only' })
    // the interactive session started untitled; the model's title is what the listing shows
    expect(summary!.title).toBeUndefined()
    expect(events.find((e) => e.type === 'session/title')?.data).toMatchObject({
      title: 'Greeting',
      source: 'model',
    })
    const listed: string[] = []
    const io = { env: { KEEL_HOME: r.home }, out: (t: string) => void listed.push(t), err: () => {} }
    expect(await runCli(['sessions', 'list'], io)).toBe(0)
    expect(listed.join('')).toContain(summary!.id)
    expect(listed.join('')).toContain('Greeting')
  })
})
