import { existsSync, readdirSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import type { ScriptedResponse } from '@keel/scripted-server'
import { JsonlStore } from '@keel/store-jsonl'
import { describe, expect, it } from 'vitest'
import { type KeelRig, writeAskingPreset } from './keel-process.js'
import { idle, ptyTests } from './pty.js'

const { rig, open } = ptyTests()
const LEFT = '\x1b[D'
const HOME = '\x1b[H'
const END = '\x1b[F'
const UP = '\x1b[A'
const ESC = '\x1b'

/** What the model was sent as the last user message of request `n`. */
const lastUser = (r: KeelRig, n: number): string => {
  const messages = r.server.requests[n]!.body!.messages as Array<{ role: string; content: string }>
  return messages.filter((m) => m.role === 'user').at(-1)!.content
}
const logged = async (r: KeelRig) => {
  const [summary] = await new JsonlStore({ home: r.home }).list({ limit: 1 })
  return (await new JsonlStore({ home: r.home }).load(summary!.id)).events
}
const slow = (word: string): ScriptedResponse => ({
  text: `${word} ${'word '.repeat(600)}`,
  chunking: { text: 5 },
  delayMs: 40,
})

describe('the input line (a real pseudo-terminal)', { timeout: 180_000 }, () => {
  it('edits at the cursor, adds lines with Ctrl-J and \\+Enter, and ↑ recalls the project’s history after a restart', async () => {
    const r = await rig({ text: 'one' }, { text: 'two' }, { text: 'three' })
    const pty = open(r, ['--preset', 'minimal'])
    await pty.ready('› ')
    // `helo`, Left, `l` is `hello`; Home and End move to either end
    pty.write('helo')
    pty.write(LEFT)
    pty.write('l')
    pty.write(END)
    pty.write(' world')
    pty.write(HOME)
    pty.write('say ')
    pty.write('\r')
    await pty.waitFor('one')
    await idle(pty)
    expect(lastUser(r, 0)).toBe('say hello world')
    // Ctrl-J (a bare line feed) and a trailing backslash before Enter add a line instead of sending
    // (each key waits for the screen: keys read together look like a paste, Ink 6 has no bracketed paste)
    pty.write('first')
    pty.write('\n')
    await pty.waitForScreen('a second line', (rows) => rows.includes('› first'))
    pty.write('second \\')
    await pty.waitForScreen('the backslash', (rows) => rows.some((row) => row.startsWith('  second \\')))
    pty.write('\r')
    await pty.waitForScreen('a third line', (rows) => rows.includes('  second'))
    pty.write('third')
    await pty.waitForScreen('three lines in the input', (rows) =>
      rows.some((row) => row.startsWith('  third')),
    )
    pty.write('\r')
    await pty.waitFor('two')
    await idle(pty)
    expect(lastUser(r, 1)).toBe('first\nsecond \nthird')
    pty.write('\x04')
    expect(await pty.exitCode()).toBe(0)
    const historyDir = join(r.home, 'history')
    expect(readdirSync(historyDir)).toHaveLength(1)

    // a new keel in the same project: ↑ brings back what was sent, newest first
    const again = open(r, ['--preset', 'minimal'])
    await again.ready('› ')
    again.write(UP)
    await again.waitForScreen('the last entry', (rows) => rows.some((row) => row === '  third'))
    // in a multi-line entry ↑ first walks up its lines, then to the entry before
    again.write(UP)
    await again.waitForScreen(
      'the cursor on the second line',
      (rows) => rows.includes('› first') && rows.includes('  second'),
    )
    again.write(UP)
    again.write(UP)
    await again.waitForScreen('the entry before', (rows) =>
      rows.some((row) => row.startsWith('› say hello world')),
    )
    again.write('\r')
    await again.waitFor('three')
    expect(lastUser(r, 2)).toBe('say hello world')
    await idle(again)
    again.write('\x04')
    expect(await again.exitCode()).toBe(0)
  })

  it('Esc interrupts a turn; the Ctrl-C exit arm shows for 2 s and expires', async () => {
    const r = await rig(slow('one'), { text: 'after' })
    const pty = open(r, ['--preset', 'minimal'])
    await pty.ready('› ')
    pty.write('go slowly\r')
    await pty.waitFor('one word')
    pty.write(ESC)
    await pty.waitFor('turn 1 aborted')
    await idle(pty)
    // the turn is over: "interrupting…" is no longer true
    await pty.waitForScreen(
      'the interrupting hint to go',
      (rows) => !rows.some((r) => r.includes('interrupting…')),
    )
    pty.write('\x03')
    await pty.waitForScreen('the exit hint', (rows) =>
      rows.some((r) => r.includes('press Ctrl-C again within 2 s')),
    )
    await pty.waitForScreen(
      'the hint to expire',
      (rows) => !rows.some((r) => r.includes('press Ctrl-C again')),
    )
    pty.write('\x03') // arms again, does not exit
    await pty.waitForScreen('the exit hint again', (rows) =>
      rows.some((r) => r.includes('press Ctrl-C again within 2 s')),
    )
    pty.write('next\r')
    await pty.waitFor('after')
    await idle(pty)
    pty.write('\x03')
    pty.write('\x03')
    expect(await pty.exitCode()).toBe(130)
    const ends = (await logged(r)).filter((e) => e.type === 'turn/end').map((e) => e.data.reason)
    expect(ends).toEqual(['aborted', 'completed'])
  })

  it('Esc while a command runs stops it, and the line says it was stopped, not that it never ran', async () => {
    const r = await rig({ toolCalls: [{ name: 'bash', arguments: { command: 'touch started; sleep 30' } }] })
    const pty = open(r, ['--preset', 'minimal'])
    await pty.ready('› ')
    pty.write('wait a while\r')
    const started = join(r.cwd, 'started')
    while (!existsSync(started)) await new Promise((resolve) => setTimeout(resolve, 20))
    pty.write(ESC)
    await pty.waitFor('turn 1 aborted')
    await idle(pty)
    const rows = await pty.rows()
    expect(
      rows.some((row) => row.includes('✗ `touch started; sleep 30` was stopped: the turn was interrupted')),
    ).toBe(true)
    expect(rows.some((row) => row.includes('was not run'))).toBe(false)
    // its `→ bash` line once: shown when it started, not again with the stop
    expect(rows.filter((row) => row.startsWith('→ bash'))).toHaveLength(1)
    const [result] = (await logged(r)).filter((e) => e.type === 'tool/result')
    expect(result?.data).toMatchObject({ errorCode: 'TOOL_ABORTED' })
    pty.write('\x04')
    expect(await pty.exitCode()).toBe(0)
  })

  it('@path completes with Tab and attaches the file to the message, logged with it', async () => {
    const r = await rig({ text: 'I read your notes.' })
    await writeFile(join(r.cwd, 'notes-for-keel.md'), 'remember: the parser drops tabs\n')
    await writeFile(join(r.cwd, 'notes-other.md'), 'x\n')
    const pty = open(r, ['--preset', 'minimal'])
    await pty.ready('› ')
    pty.write('read @notes-')
    pty.write('\t')
    await pty.waitForScreen('both candidates', (rows) =>
      rows.some((row) => row.includes('notes-for-keel.md') && row.includes('notes-other.md')),
    )
    pty.write('f')
    pty.write('\t')
    await pty.waitForScreen('the completed path', (rows) =>
      rows.some((row) => row.startsWith('› read @notes-for-keel.md')),
    )
    pty.write('please\r')
    await pty.waitFor('I read your notes.')
    await pty.waitFor('(attached: notes-for-keel.md)')
    await idle(pty)
    const sent = lastUser(r, 0)
    expect(sent).toContain('read @notes-for-keel.md please')
    expect(sent).toContain('<attached path="notes-for-keel.md">\nremember: the parser drops tabs')
    const user = (await logged(r)).find((e) => e.type === 'user/message')!
    expect(user.data.message.content).toHaveLength(2)
    pty.write('\x04')
    expect(await pty.exitCode()).toBe(0)
  })

  it('!cmd runs the bash tool directly, asked like the model’s calls; the model hears about it next turn', async () => {
    const r = await rig({ text: 'I see shell.txt now.' })
    await writeAskingPreset(r.home)
    const pty = open(r, ['--preset', 'asking'])
    await pty.ready('› ')
    pty.write('!echo from-the-shell > shell.txt; echo done; echo again\r')
    await pty.waitFor('Allow bash?')
    await pty.waitFor('waiting for your answer')
    pty.write('y')
    await pty.waitFor('bash ✓ done')
    await idle(pty)
    expect(await readFile(join(r.cwd, 'shell.txt'), 'utf8')).toBe('from-the-shell\n')
    expect(r.server.requests).toHaveLength(0) // no model call for a shell command
    pty.write('what changed?\r')
    await pty.waitFor('I see shell.txt now.')
    await idle(pty)
    const messages = JSON.stringify(r.server.requests[0]!.body!.messages)
    expect(messages).toContain(
      'I ran `echo from-the-shell > shell.txt; echo done; echo again` with the bash tool myself',
    )
    expect(messages).toContain('again')
    const events = await logged(r)
    expect(events.filter((e) => e.type === 'tool/direct-call').map((e) => e.data.source)).toEqual(['user'])
    expect(events.filter((e) => e.type === 'approval/decided').map((e) => e.data.outcome)).toEqual([
      'allowed-once',
    ])
    // a shell command typed while a turn runs is not lost: it stays in the input line
    pty.write('\x04')
    expect(await pty.exitCode()).toBe(0)
    expect(existsSync(join(r.home, 'history'))).toBe(true)
  })
})
