import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../../../..')
const entry = join(root, 'packages/cli/cli/src/demo.ts')

function run(args: string[], env: Record<string, string | undefined>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', entry, ...args], {
      cwd: root,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (d) => {
      stdout += d
    })
    child.stderr.on('data', (d) => {
      stderr += d
    })
    child.on('close', (code) => done({ code, stdout, stderr }))
  })
}

describe('pnpm demo (the entry as a child process)', () => {
  it('runs the scripted coding task offline, exits 0 and prints where the session log is', async () => {
    const home = await mkdtemp(join(tmpdir(), 'keel-demo-test-home-'))
    // A key in the environment without --live must not switch to the network.
    const { code, stdout, stderr } = await run([], {
      KEEL_HOME: home,
      DEEPSEEK_API_KEY: 'sk-not-used',
      NO_COLOR: '1',
    })
    expect(stderr).toBe('')
    expect(code).toBe(0)
    expect(stdout).toContain('scripted model at http://127.0.0.1:')
    expect(stdout).toContain(
      'preset     coding: @keel/user-approval, @keel/hooks, @keel/compaction, @keel/model-selection, @keel/todo, @keel/schedule',
    )
    expect(stdout).toContain('→ edit_file path=greet.mjs')
    expect(stdout).toContain('← bash ✓ PASS')
    expect(stdout).toContain('[@keel/todo] Todo list (3/3 done)') // the plan, shown as it changes
    expect(stdout).toContain('turn 1 completed')
    expect(stdout).not.toContain('\x1b[') // no ANSI when stdout is not a TTY
    const log = /log\s+(\S+session\.jsonl)/.exec(stdout)?.[1]
    expect(log).toBeDefined()
    expect(log!.startsWith(join(home, 'sessions'))).toBe(true)
    expect(existsSync(log!)).toBe(true)
    const lines = readFileSync(log!, 'utf8').trim().split('\n')
    expect(lines.length).toBeGreaterThan(20)
    expect(JSON.parse(lines[lines.length - 1]!)).toMatchObject({
      type: 'turn/end',
      data: { reason: 'completed' },
    })
    const workspace = /workspace\s+(\S+)/.exec(stdout)![1]!
    expect(readFileSync(join(workspace, 'greet.mjs'), 'utf8')).toContain("return 'Hello, ' + name + '!'")
  })

  it('says up front when there is no OS sandbox; the shell command is then refused, not run unsandboxed', async () => {
    // A PATH with every program of the real one except bubblewrap.
    const bin = await mkdtemp(join(tmpdir(), 'keel-demo-test-bin-'))
    for (const dir of (process.env.PATH ?? '').split(':').filter((d) => existsSync(d))) {
      for (const name of readdirSync(dir)) {
        if (name === 'bwrap' || existsSync(join(bin, name))) continue
        symlinkSync(join(dir, name), join(bin, name))
      }
    }
    const home = await mkdtemp(join(tmpdir(), 'keel-demo-test-home-'))
    const { code, stdout } = await run([], { PATH: bin, KEEL_HOME: home, NO_COLOR: '1' })
    expect(code).toBe(0)
    expect(stdout).toMatch(
      /sandbox {4}no OS sandbox \(.*bwrap.*\): shell commands need approval and are refused without a terminal; install bubblewrap/u,
    )
    expect(stdout).toContain('← bash ✗ APPROVAL_UNAVAILABLE')
    expect(stdout).not.toContain('← bash ✓ PASS')
    rmSync(bin, { recursive: true, force: true })
    rmSync(home, { recursive: true, force: true })
  })

  it('defaults KEEL_HOME to a temporary directory and says so', async () => {
    const { code, stdout } = await run([], { NO_COLOR: '1' })
    expect(code).toBe(0)
    const home = /KEEL_HOME\s+(\S+) \(temporary/.exec(stdout)?.[1]
    expect(home).toBeDefined()
    expect(home!.startsWith(tmpdir())).toBe(true)
    expect(stdout).toContain(join(home!, 'sessions'))
  })

  it('refuses --live without DEEPSEEK_API_KEY before touching the network, and rejects unknown flags', async () => {
    const live = await run(['--live', 'do something'], {})
    expect(live.code).toBe(2)
    expect(live.stderr).toContain('DEEPSEEK_API_KEY')
    expect(live.stdout).toBe('')
    const bad = await run(['--frobnicate'], {})
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('usage: pnpm demo')
  })
})
