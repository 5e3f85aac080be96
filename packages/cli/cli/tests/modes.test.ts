// `keel --plan`, `keel --permissions <name>` and session titles in `keel sessions list|show|export`,
// run in process against the scripted server; what the model was sent is read from the server.
import { mkdir, mkdtemp, readFile, realpath, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PLAN_MODE_ON } from '@keel/plan-mode'
import { type RecordedRequest, type ScriptedResponse, startScriptedServer } from '@keel/scripted-server'
import { JsonlStore } from '@keel/store-jsonl'
import { afterEach, describe, expect, it } from 'vitest'
import { runCli } from '../src/index.js'
import { linesOfType } from '../src/session-titles.js'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup()
})

async function rig(script: ScriptedResponse[] = []) {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'keel-modes-')))
  const home = join(base, 'home')
  const cwd = join(base, 'ws')
  await mkdir(cwd, { recursive: true })
  const server = await startScriptedServer({ script })
  cleanups.push(() => server.close())
  const out: string[] = []
  const err: string[] = []
  const run = (argv: string[]) =>
    runCli(argv, {
      env: { KEEL_HOME: home },
      cwd,
      out: (t) => void out.push(t),
      err: (t) => void err.push(t),
    })
  return { home, cwd, server, out, err, run, url: server.baseURL }
}

const toolResults = (r: RecordedRequest): string[] =>
  ((r.body?.messages ?? []) as Array<{ role: string; content?: unknown }>)
    .filter((m) => m.role === 'tool')
    .map((m) => String(m.content))
const write: ScriptedResponse = {
  toolCalls: [{ name: 'write_file', arguments: { path: 'a.txt', content: 'x' } }],
}

describe('start flags', () => {
  it('--plan starts in plan mode: the model is told, and a write is refused', async () => {
    const r = await rig([write, { text: 'My plan: write a.txt.' }])
    expect(await r.run(['-p', 'write a.txt', '--plan', '--base-url', r.url])).toBe(0)
    expect(r.out.join('')).toBe('My plan: write a.txt.\n')
    const first = JSON.stringify(r.server.requests[0]!.body?.messages)
    expect(first).toContain(JSON.stringify(PLAN_MODE_ON).slice(1, -1))
    expect(toolResults(r.server.requests[1]!)[0]).toMatch(/^Error \[PLAN_MODE_READ_ONLY\]/)
    expect(r.err.join('')).toContain('keel: plan mode on')
    const [summary] = await new JsonlStore({ home: r.home }).list({ limit: 1 })
    const events = (await new JsonlStore({ home: r.home }).load(summary!.id)).events
    expect(events.find((e) => e.type === 'command/run')?.data).toMatchObject({
      name: 'plan',
      args: 'on',
      source: 'user',
    })
    expect(events.find((e) => e.type === 'plan/mode')?.data).toEqual({ active: true })
  })

  it('--permissions <name> picks a preset before the task runs', async () => {
    const r = await rig([write, { text: 'refused' }])
    expect(await r.run(['-p', 'write a.txt', '--permissions', 'read-only', '--base-url', r.url])).toBe(0)
    expect(toolResults(r.server.requests[1]!)[0]).toMatch(/^Error \[READ_ONLY_SESSION\]/)
    expect(r.err.join('')).toContain(
      'permissions: read-only (approval policy on_request, sandbox mode read_only)',
    )
  })

  it('an unknown preset name, or a preset without the plugin, is one line and exit 2', async () => {
    const r = await rig()
    expect(await r.run(['-p', 'x', '--permissions', 'sudo', '--base-url', r.url])).toBe(2)
    expect(r.err.join('')).toContain(
      'keel: --permissions: no permission preset "sudo"; presets: read-only, ask-always, auto-edit, full-access (see keel --help)\n',
    )
    r.err.length = 0
    expect(await r.run(['-p', 'x', '--plan', '--preset', 'minimal', '--base-url', r.url])).toBe(2)
    expect(r.err.join('')).toContain(
      'keel: --plan needs the @keel/plan-mode plugin, which preset minimal does not include (try --preset coding)',
    )
    expect(r.server.requests).toHaveLength(0)
  })
})

describe('session titles in the listing', () => {
  async function stored(
    home: string,
    titles: Array<{ title: string; source: 'model' | 'user' }>,
    filler = 0,
  ) {
    await import('@keel/session-title')
    const store = new JsonlStore({ home })
    const handle = await store.create({ header: { cwd: '/w', title: 'from the header' } })
    for (let i = 0; i < filler; i++) {
      handle.session.append('developer/message', {
        message: { role: 'developer', content: [{ type: 'text', text: `note ${i} ${'x'.repeat(i % 97)}` }] },
      })
    }
    for (const t of titles) handle.session.append('session/title', t, { ignorable: true })
    await handle.close()
    await store.close()
    return handle.session.id
  }

  it('shows the latest title (a person’s wins) in list, show and the HTML export', async () => {
    const r = await rig()
    const id = await stored(r.home, [
      { title: 'Model title', source: 'model' },
      { title: 'My title', source: 'user' },
      { title: 'Later model', source: 'model' },
    ])
    const untitled = await stored(r.home, [])
    expect(await r.run(['sessions', 'list'])).toBe(0)
    const lines = r.out.join('').split('\n')
    expect(lines.find((l) => l.startsWith(id))).toMatch(/ {2}My title +\/w/)
    expect(lines.find((l) => l.startsWith(untitled))).toContain('  from the header  /w')
    r.out.length = 0
    expect(await r.run(['sessions', 'show', id])).toBe(0)
    expect(r.out.join('')).toContain(`session ${id} — My title\n`)
    const file = join(r.home, 'page.html')
    expect(await r.run(['sessions', 'export', id, '--html', '-o', file])).toBe(0)
    expect(await readFile(file, 'utf8')).toContain('<title>My title — Keel session')
  })

  it('finds title lines across read chunks without parsing the rest of the log', async () => {
    const r = await rig()
    const id = await stored(r.home, [{ title: 'Deep title', source: 'model' }], 12_000)
    const file = new JsonlStore({ home: r.home }).fileOf(id)
    const lines = await linesOfType(file, 'session/title')
    expect(lines).toEqual([
      expect.objectContaining({
        type: 'session/title',
        data: expect.objectContaining({ title: 'Deep title' }),
      }),
    ])
    // A title line straddling the 1 MiB read boundary at every offset of its first bytes.
    for (let shift = 1; shift <= 30; shift++) {
      const head = `${'{"type":"pad"}\n'.padStart(1024 * 1024 - shift, ' ')}`
      const line = '{"type":"session/title","seq":1,"time":1,"data":{"title":"Edge","source":"user"}}\n'
      const path = join(r.home, `edge-${shift}.jsonl`)
      await writeFile(path, `${head}${line}`)
      expect(
        (await linesOfType(path, 'session/title')).map((e) => (e as { data: { title: string } }).data.title),
      ).toEqual(['Edge'])
    }
  })
})
