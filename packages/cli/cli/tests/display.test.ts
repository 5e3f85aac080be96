import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { writeAskingPreset, writeStrictPreset } from './keel-process.js'
import { idle, plain, ptyTests } from './pty.js'

const { rig, open } = ptyTests()

const MARKDOWN = [
  '# Release notes',
  '',
  'This is **important** and `inline code`.',
  '',
  '- first point',
  '- second point',
  '',
  '```js',
  'const answer = 42',
  '```',
  '',
  '| name | value |',
  '|------|-------|',
  '| alpha | 1 |',
].join('\n')

describe('what interactive keel shows (a real pseudo-terminal)', { timeout: 180_000 }, () => {
  it('renders markdown answers: headings, emphasis, lists, code and tables, streamed in small pieces', async () => {
    const r = await rig({ text: MARKDOWN, chunking: { text: 3 } })
    const pty = open(r, ['--preset', 'minimal'])
    await pty.ready('› ')
    pty.write('notes please\r')
    await pty.waitFor('alpha')
    await idle(pty)
    const rows = await pty.rows()
    const screen = rows.join('\n')
    expect(screen).toContain('Release notes')
    expect(screen).not.toContain('# Release notes')
    expect(screen).toContain('This is important and inline code.')
    expect(screen).not.toContain('**')
    expect(screen).toMatch(/\* first point/u)
    expect(screen).toContain('const answer = 42')
    expect(screen).not.toContain('```')
    expect(screen).toMatch(/│ alpha │ 1 {5}│/u)
    pty.write('\x04')
    expect(await pty.exitCode()).toBe(0)
  })

  // Under CI=1 too (as .ci/run sets it): the colour libraries judge colour once, when imported,
  // so the whole UI is imported with CI hidden (tui/load.ts), not only Ink.
  it('highlights the syntax of a code block by its language', async () => {
    const r = await rig({ text: '```js\nconst answer = 42 // the answer\n```', chunking: { text: 3 } })
    const { NO_COLOR: _, ...env } = r.env
    const pty = open({ ...r, env: { ...env, CI: '1' } }, ['--preset', 'minimal'])
    await pty.ready('› ')
    pty.write('code please\r')
    await pty.waitFor('the answer')
    await idle(pty)
    const colors = await pty.colorsOf('const answer = 42 // the answer')
    expect(colors, (await pty.rows()).join('\n')).toBeDefined()
    // the keyword and the number each in a colour of its own, apart from the name
    const [keyword, name, number] = [colors![0], colors![6], colors![15]]
    expect(keyword, JSON.stringify(colors)).not.toBe(name)
    expect(number, JSON.stringify(colors)).not.toBe(name)
    expect(keyword, JSON.stringify(colors)).not.toBe(number)
    pty.write('\x04')
    expect(await pty.exitCode()).toBe(0)
  })

  it('an edit is asked about as a unified diff; "for this session" names its scope; a refusal says who and why', async () => {
    const r = await rig(
      { toolCalls: [{ name: 'read_file', arguments: { path: 'greet.mjs' } }] },
      {
        toolCalls: [
          {
            name: 'edit_file',
            arguments: { path: 'greet.mjs', oldString: "return 'helo'", newString: "return 'hello'" },
          },
        ],
      },
      { text: 'Fixed.' },
      { toolCalls: [{ name: 'bash', arguments: { command: 'rm greet.mjs' } }] },
      { text: 'Left it.' },
    )
    await writeFile(join(r.cwd, 'greet.mjs'), "export function greet() {\n  return 'helo'\n}\n")
    await writeStrictPreset(r.home)
    const pty = open(r, ['--preset', 'strict'])
    await pty.ready('› ')
    pty.write('fix the greeting\r')
    await pty.waitFor('Allow edit_file?')
    const rows = await pty.waitForScreen('the diff', (rows) =>
      rows.some((row) => row.includes("+  return 'hello'")),
    )
    const screen = rows.join('\n')
    expect(screen).toContain('greet.mjs: +1 −1')
    expect(screen).toContain('@@ -1,3 +1,3 @@')
    expect(screen).toContain("-  return 'helo'")
    expect(screen).toContain('[a] allow every edit_file call for this session')
    expect(screen).toContain('waiting for your answer')
    expect(screen).not.toContain('oldString=')
    pty.write('y')
    await pty.waitFor('Fixed.')
    await idle(pty)
    expect(await readFile(join(r.cwd, 'greet.mjs'), 'utf8')).toContain("return 'hello'")

    const mark = pty.screen.length
    pty.write('clean up\r')
    await pty.waitFor(
      '[a] allow `rm greet.mjs` with bash (this exact command line) for this session',
      60_000,
      mark,
    )
    pty.write('n')
    await pty.waitFor('reason for rejecting', 60_000, mark)
    pty.write('keep the file\r')
    await pty.waitFor('Left it.', 60_000, mark)
    await idle(pty)
    const after = pty.screen.slice(mark)
    expect(after).toContain('→ bash command="rm greet.mjs"')
    expect(after).toContain('✗ you refused `rm greet.mjs`: “keep the file”')
    expect(after).not.toContain('was not run: denied by plugin')
    // the footer counts the calls at the preset's prices; /cost and /context are the CLI's own
    pty.write('/cost\r')
    await pty.waitFor(/deepseek-v4-flash +5 +[\d.k]+ +\d+ +\d+ +\$\d+\.\d\d/u, 60_000, mark)
    pty.write('/context\r')
    await pty.waitFor(/last call used [\d,]+ tokens of 1\.0M/u, 60_000, mark)
    await pty.waitForScreen('the footer', (rows) =>
      rows.some((row) =>
        /^deepseek-v4-flash · context [\d.k]+\/1\.0M \(0%\) · ↑[\d.k]+ ↓\d+ cached 0 · \$\d+\.\d\d$/u.test(
          row,
        ),
      ),
    )
    pty.write('\x04')
    expect(await pty.exitCode()).toBe(0)
  })

  it('the question’s keys wrap between keys, each whole, in a narrower terminal', async () => {
    const r = await rig({ toolCalls: [{ name: 'bash', arguments: { command: 'ls' } }] }, { text: 'Listed.' })
    await writeAskingPreset(r.home)
    const pty = open(r, ['--preset', 'asking'])
    await pty.ready('› ')
    pty.resize(100, 40)
    pty.write('list\r')
    const rows = await pty.waitForScreen('the question', (rows) =>
      rows.some((row) => row.includes('[y] allow once')),
    )
    const box = rows.map((row) => row.replace(/^│ ?|\s*│$/gu, ''))
    expect(
      box.some((row) => row.includes('[n] reject with a reason')),
      rows.join('\n'),
    ).toBe(true)
    expect(
      box.some((row) => row.includes('[a] allow `ls` with bash (this exact command line) for this session')),
    ).toBe(true)
    pty.write('y')
    await pty.waitFor('Listed.')
    await idle(pty)
    pty.write('\x04')
    expect(await pty.exitCode()).toBe(0)
  })

  it('one-shot mode on a terminal: the question starts on its own line, with the same keys', async () => {
    const r = await rig(
      {
        text: 'I will write it.',
        toolCalls: [{ name: 'bash', arguments: { command: 'echo hi > out.txt' } }],
      },
      { toolCalls: [{ name: 'bash', arguments: { command: 'rm out.txt' } }] },
      { text: 'Written.' },
    )
    await writeAskingPreset(r.home)
    const pty = open(r, ['write the file', '--preset', 'asking'])
    await pty.waitFor('Approval needed: bash')
    const rows = await pty.waitForScreen('the question', (rows) =>
      rows.some((row) => row.startsWith('  [y] allow once')),
    )
    expect(rows).toContain('I will write it.')
    expect(rows.some((row) => row.startsWith('Approval needed: bash'))).toBe(true)
    expect(rows.join('')).toContain(
      '[a] allow `echo hi > out.txt` with bash (this exact command line) for this session   [n <reason>] reject',
    )
    pty.write('y\r')
    await pty.waitFor('command: rm out.txt')
    pty.write('n keep it\r')
    await pty.waitFor('Written.')
    expect(pty.screen).toContain('→ bash command="rm out.txt"')
    expect(pty.screen).toContain('✗ you refused `rm out.txt`: “keep it”')
    expect(await pty.exitCode()).toBe(0)
    expect(await readFile(join(r.cwd, 'out.txt'), 'utf8')).toBe('hi\n')
  })

  it('tool output is collapsed to its first line; Ctrl-O shows the last output in full', async () => {
    const r = await rig(
      { toolCalls: [{ name: 'bash', arguments: { command: 'seq 1 40' } }] },
      { text: 'Counted.' },
    )
    await writeAskingPreset(r.home)
    const pty = open(r, ['--preset', 'asking'])
    await pty.ready('› ')
    pty.write('count\r')
    await pty.waitFor('Allow bash?')
    pty.write('y')
    await pty.waitFor('Counted.')
    await idle(pty)
    expect(pty.screen).toMatch(/bash ✓ 1 \(\+\d+ more lines · Ctrl-O shows all\)/u)
    expect(pty.screen).not.toContain('\n37\n')
    pty.write('\x0f')
    await pty.waitForScreen('the whole output', (rows) => rows.includes('37') && rows.includes('40'))
    pty.write('\x04')
    expect(await pty.exitCode()).toBe(0)
  })

  it('a failed call names its error code once, then what the tool said', async () => {
    const r = await rig(
      {
        toolCalls: [{ name: 'edit_file', arguments: { path: 'notes.txt', oldString: 'a', newString: 'b' } }],
      },
      { text: 'It needs reading first.' },
    )
    await writeFile(join(r.cwd, 'notes.txt'), 'a\n')
    const pty = open(r, ['--preset', 'minimal'])
    await pty.ready('› ')
    pty.write('edit notes\r')
    await pty.waitFor('It needs reading first.')
    await idle(pty)
    const line = (await pty.rows()).find((row) => row.includes('edit_file ✗'))
    expect(line).toMatch(/^← edit_file ✗ FILE_NOT_READ: notes\.txt exists but has not been read/u)
    pty.write('\x04')
    expect(await pty.exitCode()).toBe(0)
  })

  it('a command that exits non-zero is marked failed with its exit code; exit 0 is no extra line', async () => {
    const r = await rig(
      { toolCalls: [{ name: 'bash', arguments: { command: 'cat missing.txt' } }] },
      {
        toolCalls: [
          { name: 'bash', arguments: { command: `echo fine # ${'a comment that runs long '.repeat(6)}` } },
        ],
      },
      { text: 'Both ran.' },
    )
    const pty = open(r, ['--preset', 'minimal'])
    await pty.ready('› ')
    pty.write('run them\r')
    await pty.waitFor('Both ran.')
    await idle(pty)
    const rows = await pty.rows()
    // a summary longer than the terminal continues under its text, not at column 0
    const long = rows.findIndex((row) => row.startsWith('→ bash command="echo'))
    expect(rows[long + 1]).toMatch(/^ {2}\S/u)
    const failed = rows.find((row) => row.includes('cat: missing.txt'))
    expect(failed).toMatch(/^← bash ✗ exit 1: cat: missing\.txt: No such file or directory$/u)
    expect(rows).toContain('← bash ✓ fine')
    pty.write('\x04')
    expect(await pty.exitCode()).toBe(0)
  })

  it('a message a plugin sends (a schedule firing) is shown with its source, as the model gets it', async () => {
    const r = await rig(
      {
        toolCalls: [
          {
            name: 'schedule_create',
            arguments: { kind: 'after', when: '1s', prompt: 'Check the build now.' },
          },
        ],
      },
      { text: 'I will check in a second.' },
      { text: 'Reminder' }, // the session's title, asked after the first turn
      { text: 'Build checked.' },
    )
    const pty = open(r, ['--preset', 'coding'])
    await pty.ready('› ')
    pty.write('remind me\r')
    await pty.waitFor('Build checked.')
    await idle(pty)
    const rows = await pty.rows()
    const fired = rows.findIndex((row) => row.includes('Schedule s1 (after 1s) fired.'))
    expect(rows.indexOf('> (schedule/s1) Check the build now.'), rows.join('\n')).toBeGreaterThan(fired)
    pty.write('\x04')
    expect(await pty.exitCode()).toBe(0)
  })

  it('after a resize mid-stream no line keeps the old width', async () => {
    const words = Array.from({ length: 150 }, (_, i) => `w${String(i).padStart(3, '0')}`).join(' ')
    const r = await rig({ text: words, chunking: { text: 4 }, delayMs: 15 })
    const pty = open(r, ['--preset', 'minimal'])
    await pty.ready('› ')
    pty.write('stream\r')
    await pty.waitFor('w060')
    const before = pty.output.length
    pty.resize(70, 40)
    await pty.waitFor('w149')
    await idle(pty)
    const rows = await pty.waitForScreen('the finished answer', (rows) =>
      rows.some((row) => row.includes('w149')),
    )
    // every word is on the screen exactly once, and the answer is laid out at the new width
    const text = rows.join('\n')
    for (const word of ['w000', 'w030', 'w060', 'w100', 'w149']) expect(text.split(word)).toHaveLength(2)
    expect(Math.max(...rows.map((row) => row.length))).toBeLessThanOrEqual(70)
    const answer = rows.filter((row) => /^w\d{3}( w\d{3})*$/u.test(row))
    expect(answer.slice(0, -1).every((row) => row.length > 60)).toBe(true) // filled at 70, not cut at 120
    // The terminal rewraps the old frame's lines into several rows each, more than Ink
    // erases: the screen is cleared and the transcript printed again at the new width.
    // (Without that, words of the old frame stay on the screen twice: checked above.)
    const after = pty.output.slice(before)
    expect(after).toContain('\x1b[2J')
    expect(plain(after.slice(after.lastIndexOf('\x1b[2J')))).toContain('> stream')
    pty.write('\x04')
    expect(await pty.exitCode()).toBe(0)
  })
})
