import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { JsonlStore } from '@keel/store-jsonl'
import { describe, expect, it } from 'vitest'
import { type KeelRig, runKeel } from './keel-process.js'
import { idle, ptyTests } from './pty.js'

const { rig, open } = ptyTests()
const sessionsOf = (r: KeelRig) =>
  existsSync(join(r.home, 'sessions')) ? readdirSync(join(r.home, 'sessions')) : []
const p = (r: KeelRig, ...args: string[]) =>
  runKeel(['-p', ...args, '--base-url', r.server.baseURL], { env: r.env, cwd: r.cwd })

describe('sessions: stored when a prompt gets through, titled with it, found by activity', {
  timeout: 180_000,
}, () => {
  it('keel opened and closed with no prompt stores nothing; the first prompt is the title', async () => {
    const r = await rig({ text: 'hello back' })
    const empty = open(r, ['--preset', 'minimal'])
    await empty.ready('› ')
    empty.write('\x04')
    expect(await empty.exitCode()).toBe(0)
    expect(empty.screen).toContain('nothing was stored')
    expect(sessionsOf(r)).toEqual([])
    const used = open(r, ['--preset', 'minimal'])
    await used.waitFor('› ')
    used.write('fix the parser please\r')
    await used.waitFor('hello back')
    await idle(used)
    used.write('\x04')
    expect(await used.exitCode()).toBe(0)
    const list = await runKeel(['sessions', 'list'], { env: r.env, cwd: r.cwd })
    const [head, row, ...more] = list.stdout.trim().split('\n')
    expect(head).toMatch(/^ID +LAST ACTIVITY +EVENTS +TITLE +DIRECTORY$/u)
    expect(row).toContain('fix the parser please')
    expect(row).toContain(r.cwd)
    expect(more).toEqual([])
  })

  it('a prompt a UserPromptSubmit hook blocks is stored nowhere', async () => {
    const r = await rig({ text: 'never asked' })
    // the user's own hook ($KEEL_HOME/settings.json): a project's would wait for approval
    await writeFile(
      join(r.home, 'settings.json'),
      JSON.stringify({
        hooks: {
          UserPromptSubmit: [{ hooks: [{ type: 'command', command: 'echo "no secrets here" >&2; exit 2' }] }],
        },
      }),
    )
    const run = await p(r, 'my password is hunter2', '--preset', 'coding')
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('PROMPT_BLOCKED')
    expect(run.stderr).toContain('keel: nothing was stored')
    expect(r.server.requests).toHaveLength(0)
    expect(sessionsOf(r)).toEqual([])
  })

  it('sessions list and --last name a session whose log cannot be read, and list the others', async () => {
    const r = await rig({ text: 'a1' }, { text: 'a2' })
    const good = JSON.parse((await p(r, 'session A', '--output', 'json')).stdout).session_id as string
    await mkdir(join(r.home, 'sessions', 'broken'), { recursive: true })
    await writeFile(join(r.home, 'sessions', 'broken', 'session.jsonl'), 'not a header\n')
    const list = await runKeel(['sessions', 'list'], { env: r.env, cwd: r.cwd })
    expect(list.code).toBe(0)
    expect(list.stdout).toContain(good)
    expect(list.stdout).not.toContain('broken')
    expect(list.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^keel: not listed: session broken is corrupt at .*broken.session\.jsonl/u),
    ])
    const json = await runKeel(['sessions', 'list', '--json'], { env: r.env, cwd: r.cwd })
    expect((JSON.parse(json.stdout) as { id: string }[]).map((s) => s.id)).toEqual([good])
    expect(json.stderr).toContain('session broken is corrupt')
    const last = await runKeel(['resume', '--last', '-p', 'again', '--base-url', r.server.baseURL], {
      env: r.env,
      cwd: r.cwd,
    })
    expect(last.code).toBe(0)
    expect(last.stderr).toContain(`resumed session ${good}`)
  })

  it('sessions list sorts by last activity and takes --json; --last and -c pick the last active one here', async () => {
    const r = await rig(
      { text: 'a1' },
      { text: 'b1' },
      { text: 'a2' },
      { text: 'a3' },
      { text: 'a4' },
      { text: 'f1' },
    )
    const first = JSON.parse((await p(r, 'session A', '--output', 'json')).stdout).session_id as string
    const second = JSON.parse((await p(r, 'session B', '--output', 'json')).stdout).session_id as string
    // resuming A makes it the last active one, though B was created later
    expect(
      (await runKeel(['resume', first, '-p', 'more A', '--base-url', r.server.baseURL], { env: r.env })).code,
    ).toBe(0)
    const json = JSON.parse(
      (await runKeel(['sessions', 'list', '--json'], { env: r.env, cwd: r.cwd })).stdout,
    ) as Array<{
      id: string
      title: string
      lastActivityAt: number
    }>
    expect(json.map((s) => [s.id, s.title])).toEqual([
      [first, 'session A'],
      [second, 'session B'],
    ])
    expect(json[0]!.lastActivityAt).toBeGreaterThan(json[1]!.lastActivityAt)
    const last = await runKeel(['resume', '--last', '-p', 'again', '--base-url', r.server.baseURL], {
      env: r.env,
      cwd: r.cwd,
    })
    expect(last.stderr).toContain(`resumed session ${first}`)
    const short = await runKeel(['-c', '-p', 'and again', '--base-url', r.server.baseURL], {
      env: r.env,
      cwd: r.cwd,
    })
    expect(short.stderr).toContain(`resumed session ${first}`)
    expect(short.stdout).toBe('a4\n')
    // a fork has no prompt of its own yet: the list names what it was forked from
    const fork = await runKeel(['fork', second, '-p', 'branch off', '--base-url', r.server.baseURL], {
      env: r.env,
    })
    expect(fork.code).toBe(0)
    const rows = (await runKeel(['sessions', 'list'], { env: r.env })).stdout.split('\n')
    expect(rows[1]).toContain('fork of "session B"')
  })

  it('resume from another directory runs where the session was recorded, or refuses naming --cwd', async () => {
    const r = await rig({ text: 'made' }, { text: 'there' }, { text: 'moved' })
    const id = JSON.parse((await p(r, 'start here', '--output', 'json')).stdout).session_id as string
    const elsewhere = join(r.home, '..')
    const back = await runKeel(
      ['resume', id, '-p', 'go on', '--output', 'stream-json', '--base-url', r.server.baseURL],
      {
        env: r.env,
        cwd: elsewhere,
      },
    )
    expect(back.code).toBe(0)
    expect(JSON.parse(back.stdout.split('\n')[0]!)).toMatchObject({ type: 'init', cwd: r.cwd })
    expect(back.stderr).toContain(`running in ${r.cwd}, where the session was recorded`)
    rmSync(r.cwd, { recursive: true })
    const gone = await runKeel(['resume', id, '-p', 'go on', '--base-url', r.server.baseURL], {
      env: r.env,
      cwd: elsewhere,
    })
    expect(gone.code).toBe(2)
    expect(gone.stderr.trim()).toBe(
      `keel: session ${id} ran in ${r.cwd}, which no longer exists; to continue it elsewhere, pass --cwd <dir>`,
    )
    const moved = await runKeel(
      ['resume', id, '-p', 'go on', '--cwd', elsewhere, '--base-url', r.server.baseURL],
      {
        env: r.env,
        cwd: elsewhere,
      },
    )
    expect(moved.code).toBe(0)
    expect(moved.stdout).toBe('moved\n')
  })

  it('resuming in the interactive UI shows the earlier conversation, tool output collapsed', async () => {
    const r = await rig(
      { text: 'Looking.', toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }] },
      { text: 'There is one file here.' },
      { text: 'second answer' },
    )
    await writeFile(join(r.cwd, 'only.txt'), 'x\n'.repeat(50))
    const id = JSON.parse((await p(r, 'what is in here?', '--preset', 'minimal', '--output', 'json')).stdout)
      .session_id as string
    const again = open(r, ['resume', id])
    await again.waitFor('── resumed here ──')
    const shown = again.screen
    expect(shown).toContain('> what is in here?')
    expect(shown).toContain('→ list_dir path=.')
    expect(shown).toMatch(/← list_dir ✓ /u)
    expect(shown).toContain('There is one file here.')
    // the conversation is drawn before keys are heard: type once the prompt shows
    await again.ready('› ')
    again.write('more\r')
    await again.waitFor('second answer')
    await idle(again)
    again.write('\x04')
    expect(await again.exitCode()).toBe(0)
    const stored = await new JsonlStore({ home: r.home }).load(id)
    expect(stored.header.title).toBe('what is in here?')
    expect(readFileSync(new JsonlStore({ home: r.home }).fileOf(id), 'utf8')).toContain('"more"')
  })
  it('a refused call reads in the resumed transcript as it did live: who refused it and why', async () => {
    const r = await rig(
      { toolCalls: [{ name: 'write_file', arguments: { path: 'c.txt', content: 'x\n' } }] },
      { text: 'I may only read in plan mode.' },
    )
    const id = JSON.parse((await p(r, 'make c.txt', '--plan', '--output', 'json')).stdout)
      .session_id as string
    const again = open(r, ['resume', id])
    await again.waitFor('── resumed here ──')
    await again.ready('› ')
    const rows = await again.rows()
    expect(rows, rows.join('\n')).toContain('→ write_file path=c.txt content="x\\n"')
    const refused = rows.findIndex((row) => row.includes('write_file on c.txt refused'))
    expect(rows[refused]).toMatch(
      /^ {2}✗ write_file on c\.txt refused \(PLAN_MODE_READ_ONLY\): plan mode is on/u,
    )
    expect(rows.join('\n')).not.toContain('← write_file ✗')
    again.write('\x04')
    expect(await again.exitCode()).toBe(0)
  })
})
