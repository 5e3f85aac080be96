import { spawn } from 'node:child_process'
import { existsSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { SessionEvent } from '@keel/session'
import '@keel/todo'
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

/**
 * What the demo's model said must match what its tools returned: its last answer claims
 * the test passes only when the log's last `bash` result printed PASS, and the plan's test
 * step is closed only then.
 */
function expectHonest(log: string): void {
  const events = readFileSync(log, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => JSON.parse(l) as SessionEvent)
  const text = (blocks: ReadonlyArray<{ type: string; text?: string }>) =>
    blocks.map((b) => b.text ?? '').join('\n')
  let bash: SessionEvent<'tool/result'> | undefined
  let answer = ''
  let plan: ReadonlyArray<{ id: string; status: string }> = []
  for (const e of events) {
    if (e.type === 'tool/result' && e.data.message.toolName === 'bash') bash = e
    if (e.type === 'assistant/message') answer = text(e.data.message.content)
    if (e.type === 'todo/write') plan = e.data.todos
  }
  const passed =
    bash !== undefined &&
    bash.data.errorCode === undefined &&
    /^PASS:/mu.test(text(bash.data.message.content))
  const testStep = plan.find((t) => t.id === 'test')?.status
  if (passed) {
    expect(answer).toMatch(/passes/u)
    expect(testStep).toBe('completed')
  } else {
    expect(answer, `the answer claims a pass the log does not show: ${answer}`).not.toMatch(
      /\bpass(es|ed)?\b/iu,
    )
    expect(testStep).not.toBe('completed')
  }
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
      'preset     coding: @keel/user-approval, @keel/permission-presets, @keel/project-instructions, @keel/plan-mode, @keel/hooks, @keel/compaction, @keel/model-selection, @keel/todo, @keel/schedule, @keel/session-title, @keel/subagents, @keel/mcp',
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
    expectHonest(log!)
    expect(stdout).toContain('outcome    node test.mjs passed (PASS:')
    const lines = readFileSync(log!, 'utf8').trim().split('\n')
    expect(lines.length).toBeGreaterThan(20)
    expect(JSON.parse(lines[lines.length - 1]!)).toMatchObject({
      type: 'turn/end',
      data: { reason: 'completed' },
    })
    const workspace = /workspace\s+(\S+)/.exec(stdout)![1]!
    expect(readFileSync(join(workspace, 'greet.mjs'), 'utf8')).toContain("return 'Hello, ' + name + '!'")
  })

  it('without an OS sandbox the shell command is refused (said up front), and the demo says the fix is untested and exits 1', async () => {
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
    expect(code).toBe(1)
    expect(stdout).toMatch(
      /sandbox {4}no OS sandbox \(.*bwrap.*\): shell commands need approval and are refused without a terminal; install bubblewrap/u,
    )
    expect(stdout).toContain('✗ `node test.mjs` needed your approval and nobody could answer: not run')
    expect(stdout).not.toContain('← bash ✓ PASS')
    expect(stdout).not.toMatch(/test passes/u)
    expect(stdout).toMatch(
      /outcome {4}node test\.mjs did not run \(APPROVAL_UNAVAILABLE: .*\): the fix is untested/u,
    )
    expectHonest(/log\s+(\S+session\.jsonl)/.exec(stdout)![1]!)
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
    expect(bad.stderr).toBe('pnpm demo: unknown option --frobnicate (pnpm demo --help lists the options)\n')
  })
})
