import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { JsonlStore } from '@keel/store-jsonl'
import { afterEach, describe, expect, it } from 'vitest'
import { type KeelRig, keelRig, runKeel, writeAskingPreset } from './keel-process.js'

const rigs: KeelRig[] = []
afterEach(async () => {
  for (const rig of rigs.splice(0)) await rig.close()
})
async function rig(...script: Parameters<typeof keelRig>[0] & object[]) {
  const r = await keelRig(script)
  rigs.push(r)
  return r
}

describe('keel without a terminal (child processes against the scripted server)', {
  timeout: 120_000,
}, () => {
  it('a missing DEEPSEEK_API_KEY without --base-url is one clear message and exit 2', async () => {
    const r = await rig()
    const run = await runKeel(['-p', 'hello'], { env: r.env, cwd: r.cwd })
    expect(run.code).toBe(2)
    expect(run.stdout).toBe('')
    expect(run.stderr).toContain('no API key: set DEEPSEEK_API_KEY')
    expect(run.stderr).toContain('--base-url')
    expect(r.server.requests).toHaveLength(0)
  })

  it('-p --output stream-json: init first with schema_version, then events, result last; stdout is only JSON', async () => {
    const r = await rig(
      {
        reasoning: 'I will list the files.',
        text: 'Looking.',
        toolCalls: [{ name: 'list_dir', arguments: { path: '.' } }],
      },
      { text: 'There is one file: a.txt.' },
    )
    await writeFile(join(r.cwd, 'a.txt'), 'hi\n')
    const run = await runKeel(
      ['-p', 'what is here?', '--output', 'stream-json', '--base-url', r.server.baseURL, '--cwd', r.cwd],
      { env: r.env },
    )
    expect(run.stderr).toContain('preset coding')
    expect(run.code).toBe(0)
    const lines = run.stdout.split('\n').filter((l) => l !== '')
    const objects = lines.map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(objects[0]).toMatchObject({ type: 'init', schema_version: 1, preset: 'coding', cwd: r.cwd })
    const id = objects[0]!.session_id as string
    expect(objects.at(-1)).toMatchObject({
      type: 'result',
      status: 'success',
      is_error: false,
      result: 'There is one file: a.txt.',
      session_id: id,
      num_turns: 1,
    })
    const events = objects.slice(1, -1)
    expect(events.every((o) => o.type === 'event' || o.type === 'display')).toBe(true)
    const types = events.filter((o) => o.type === 'event').map((o) => (o.event as { type: string }).type)
    expect(types).toEqual(
      expect.arrayContaining(['turn/start', 'user/message', 'tool/call', 'tool/result', 'turn/end']),
    )
    const seqs = events.filter((o) => o.type === 'event').map((o) => o.seq as number)
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b))
    // the log on disk is what was streamed
    const stored = await new JsonlStore({ home: r.home }).load(id)
    expect(stored.header.agentPreset).toBe('coding')
    expect(stored.events.map((e) => e.type)).toEqual(expect.arrayContaining(types))
  })

  it('-p --output json prints one result object; text mode prints only the answer; keel "task" renders the run', async () => {
    const r = await rig({ text: 'forty-two' }, { text: 'plain answer' }, { text: 'shown answer' })
    const json = await runKeel(
      ['-p', 'q', '--output', 'json', '--base-url', r.server.baseURL, '--cwd', r.cwd],
      { env: r.env },
    )
    expect(json.code).toBe(0)
    expect(JSON.parse(json.stdout)).toMatchObject({ type: 'result', status: 'success', result: 'forty-two' })
    const text = await runKeel(['-p', 'q', '--base-url', r.server.baseURL, '--cwd', r.cwd], { env: r.env })
    expect(text.stdout).toBe('plain answer\n')
    const oneShot = await runKeel(
      ['say it', '--base-url', r.server.baseURL, '--cwd', r.cwd, '--preset', 'minimal'],
      {
        env: r.env,
      },
    )
    expect(oneShot.code).toBe(0)
    expect(oneShot.stdout).toContain('> you: say it')
    expect(oneShot.stdout).toContain('shown answer')
    expect(oneShot.stderr).toContain('preset minimal: no plugins')
  })

  it('an API error is exit 1 and a result with is_error', async () => {
    const r = await rig({ fault: { type: 'auth', message: 'bad key' } })
    const run = await runKeel(
      ['-p', 'q', '--output', 'json', '--base-url', r.server.baseURL, '--cwd', r.cwd],
      { env: r.env },
    )
    expect(run.code).toBe(1)
    expect(JSON.parse(run.stdout)).toMatchObject({ type: 'result', is_error: true, status: 'error' })
  })

  it('SIGINT during -p stream-json ends the turn, emits result interrupted, exits 130', async () => {
    const r = await rig({ text: 'x'.repeat(400), chunking: { text: 1 }, delayMs: 50 })
    let sent = false
    const run = await runKeel(
      ['-p', 'slow', '--output', 'stream-json', '--base-url', r.server.baseURL, '--cwd', r.cwd],
      {
        env: r.env,
        onStdout: (out, child) => {
          if (!sent && out.includes('"assistant/message"') === false && out.includes('"turn/start"')) {
            sent = true
            setTimeout(() => child.kill('SIGINT'), 300)
          }
        },
      },
    )
    expect(sent).toBe(true)
    expect(run.code).toBe(130)
    const last = JSON.parse(run.stdout.trim().split('\n').at(-1)!)
    expect(last).toMatchObject({ type: 'result', status: 'interrupted', reason: 'aborted' })
  })

  it('resume --last and resume <id> continue with the recorded preset; fork --at starts a child', async () => {
    const r = await rig({ text: 'one' }, { text: 'two' }, { text: 'three' })
    const first = await runKeel(
      [
        '-p',
        'first',
        '--output',
        'json',
        '--preset',
        'review',
        '--base-url',
        r.server.baseURL,
        '--cwd',
        r.cwd,
      ],
      {
        env: r.env,
      },
    )
    const id = JSON.parse(first.stdout).session_id as string
    const resumed = await runKeel(
      ['resume', '--last', '-p', 'second', '--base-url', r.server.baseURL, '--cwd', r.cwd],
      { env: r.env },
    )
    expect(resumed.code).toBe(0)
    expect(resumed.stdout).toBe('two\n')
    expect(resumed.stderr).toContain(`resumed session ${id}`)
    expect(resumed.stderr).toContain('rebuilt the recorded preset review')
    // the model saw the whole conversation
    const seen = JSON.stringify(r.server.requests[1]!.body?.messages)
    expect(seen).toContain('first')
    expect(seen).toContain('one')

    // cut after the first turn (a cut inside a turn is refused: exit 2)
    const parent = await new JsonlStore({ home: r.home }).load(id)
    const at = parent.events.find((e) => e.type === 'turn/end')!.seq
    const inside = await runKeel(
      ['fork', id, '--at', String(at - 1), '-p', 'x', '--base-url', r.server.baseURL],
      {
        env: r.env,
      },
    )
    expect(inside.code).toBe(2)
    expect(inside.stderr).toContain('FORK_CUT_INVALID')
    const forked = await runKeel(
      ['fork', id, '--at', String(at), '-p', 'third', '--base-url', r.server.baseURL, '--cwd', r.cwd],
      { env: r.env },
    )
    expect(forked.code).toBe(0)
    expect(forked.stderr).toMatch(new RegExp(`forked session ${id} at seq ${at} into \\S+`))
    const child = /into (\S+)/.exec(forked.stderr)![1]!
    const stored = await new JsonlStore({ home: r.home }).load(child)
    expect(stored.header.parentSession).toBe(id)
    expect(stored.header.agentPreset).toBe('review')
    expect(stored.header.seedLength).toBe(at + 1)
    const childSaw = JSON.stringify(r.server.requests[2]!.body?.messages)
    expect(childSaw).toContain('first')
    expect(childSaw).not.toContain('second')

    const missing = await runKeel(['resume', 'no-such-session', '-p', 'x', '--base-url', r.server.baseURL], {
      env: r.env,
    })
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('SESSION_NOT_FOUND')
  })

  it('presets list shows shipped and user presets; a broken user preset file is named with line:column and disables only itself', async () => {
    const r = await rig()
    const list = await runKeel(['presets', 'list'], { env: r.env, cwd: r.cwd })
    expect(list.code).toBe(0)
    expect(list.stdout.split('\n').map((l) => l.split(' ')[0])).toEqual([
      'minimal',
      'coding',
      'review',
      'headless',
      '',
    ])
    const { mkdir } = await import('node:fs/promises')
    await mkdir(join(r.home, 'presets'), { recursive: true })
    const file = join(r.home, 'presets', 'mine.json')
    await writeFile(
      file,
      JSON.stringify({
        id: 'mine',
        description: 'mine',
        plugins: [{ use: '@keel/todo', config: { maxInProgress: 'two' } }],
      }),
    )
    // a broken file disables only itself: the others still list, and it is named with the place of each problem
    const bad = await runKeel(['presets', 'list'], { env: r.env, cwd: r.cwd })
    expect(bad.code).toBe(0)
    expect(bad.stdout).toMatch(/^coding /mu)
    expect(bad.stdout).not.toContain('mine')
    expect(bad.stderr).toContain(`keel: ${file}:1:92: $.plugins[0].config.maxInProgress: `)
    expect(bad.stderr).toContain(`keel: ${file} is disabled (preset mine)`)
    const asked = await runKeel(['presets', 'show', 'mine'], { env: r.env, cwd: r.cwd })
    expect(asked.code).toBe(2)
    expect(asked.stderr).toContain('PRESET_PLUGIN_CONFIG_INVALID')
    await writeFile(
      file,
      JSON.stringify({
        id: 'mine',
        description: 'todo only',
        plugins: [{ use: '@keel/todo' }],
        tools: ['fs-read'],
      }),
    )
    const good = await runKeel(['presets', 'show', 'mine'], { env: r.env, cwd: r.cwd })
    expect(good.stdout).toContain(`from     ${file}`)
    expect(good.stdout).toContain('@keel/todo@0.1.0')
    expect(await readFile(file, 'utf8')).toContain('todo only')
  })

  it('print mode never blocks on approval: what would be asked is refused (fails closed)', async () => {
    const r = await rig(
      { text: 'Running it.', toolCalls: [{ name: 'bash', arguments: { command: 'echo hi > made.txt' } }] },
      { text: 'It was refused.' },
    )
    await writeAskingPreset(r.home)
    const run = await runKeel(
      [
        '-p',
        'make a file',
        '--preset',
        'asking',
        '--output',
        'stream-json',
        '--base-url',
        r.server.baseURL,
        '--cwd',
        r.cwd,
      ],
      { env: r.env },
    )
    expect(run.code).toBe(0)
    const objects = run.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; event?: { type: string; data: Record<string, unknown> } })
    const decided = objects.find((o) => o.event?.type === 'approval/decided')
    expect(decided?.event?.data).toMatchObject({ outcome: 'unavailable' })
    const result = objects.find((o) => o.event?.type === 'tool/result')
    expect(result?.event?.data).toMatchObject({ errorCode: 'APPROVAL_UNAVAILABLE' })
    const { existsSync } = await import('node:fs')
    expect(existsSync(join(r.cwd, 'made.txt'))).toBe(false)
  })
})
