import { existsSync, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createToolContext, runToolCall, type ToolOutput } from '@keel/tools'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { bashTool, shellTools } from '../src/index.js'

let dir: string
const leftovers: number[] = []
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'keel-shell-'))
})
afterEach(async () => {
  for (const pid of leftovers.splice(0)) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {}
  }
  await rm(dir, { recursive: true, force: true })
})

const textOf = (o: ToolOutput) => o.content.map((b) => (b.type === 'text' ? b.text : '')).join('')

async function run(args: unknown, options: Parameters<typeof bashTool>[0] = {}, signal?: AbortSignal) {
  const outcome = await runToolCall(
    bashTool(options),
    JSON.stringify(args),
    createToolContext({ cwd: dir, signal }),
    {
      outputDir: join(dir, '.out'),
    },
  )
  return { ...outcome, text: textOf(outcome.output), code: outcome.output.errorCode }
}

/** Alive = exists and is not a zombie (a zombie is dead; only its parent has not reaped it). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return false
  }
}

async function waitFor(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (check()) return
    await new Promise((r) => setTimeout(r, 50))
  }
  throw new Error(`gave up waiting for ${what}`)
}

async function pidFrom(file: string): Promise<number> {
  await waitFor(() => existsSync(file) && readFileSync(file, 'utf8').trim() !== '', `${file}`)
  const pid = Number((await readFile(file, 'utf8')).trim())
  leftovers.push(pid)
  return pid
}

describe('bash', () => {
  it('reports stdout and exit code 0', async () => {
    const r = await run({ command: 'echo hello && echo world' })
    expect(r.output.isError).toBeUndefined()
    expect(r.text).toBe('hello\nworld\n[exit code 0]')
  })

  it('reports a non-zero exit code (not as an error result) and captures stderr', async () => {
    const r = await run({ command: 'echo out; echo oops >&2; exit 3' })
    expect(r.output.isError).toBeUndefined()
    expect(r.text).toContain('out\n')
    expect(r.text).toContain('oops\n')
    expect(r.text.endsWith('[exit code 3]')).toBe(true)
  })

  it('reports death by signal', async () => {
    const r = await run({ command: 'kill -USR1 $$' })
    expect(r.text).toContain('[killed by signal SIGUSR1]')
  })

  it('says when there is no output; stdin is closed so reading commands do not hang', async () => {
    expect((await run({ command: 'cat' })).text).toBe('(no output)\n[exit code 0]')
  })

  it('runs in the working directory by default, or in cwd (relative or absolute)', async () => {
    await mkdir(join(dir, 'sub'))
    expect((await run({ command: 'pwd' })).text).toBe(`${dir}\n[exit code 0]`)
    expect((await run({ command: 'pwd', cwd: 'sub' })).text).toBe(`${join(dir, 'sub')}\n[exit code 0]`)
    expect((await run({ command: 'pwd', cwd: join(dir, 'sub') })).text).toBe(
      `${join(dir, 'sub')}\n[exit code 0]`,
    )
  })

  it('errors: CWD_NOT_FOUND, CWD_NOT_A_DIRECTORY, TOOL_INPUT_INVALID for a timeout over the maximum', async () => {
    expect((await run({ command: 'pwd', cwd: 'missing' })).code).toBe('CWD_NOT_FOUND')
    await run({ command: 'touch f' })
    expect((await run({ command: 'pwd', cwd: 'f' })).code).toBe('CWD_NOT_A_DIRECTORY')
    expect(
      (await run({ command: 'true', timeoutMs: 10_000 }, { maxTimeoutMs: 5_000, defaultTimeoutMs: 1_000 }))
        .code,
    ).toBe('TOOL_INPUT_INVALID')
  })

  it('SPAWN_FAILED when the shell binary does not exist', async () => {
    expect((await run({ command: 'true' }, { shell: join(dir, 'no-such-shell') })).code).toBe('SPAWN_FAILED')
  })

  it('timeout kills the whole process group, grandchildren included', async () => {
    const pidFile = join(dir, 'gc.pid')
    const pending = run({ command: `sleep 300 & echo $! > ${pidFile}; echo started; wait`, timeoutMs: 500 })
    const grandchild = await pidFrom(pidFile)
    const r = await pending
    expect(r.code).toBe('TIMEOUT')
    expect(r.output.isError).toBe(true)
    expect(r.text).toContain('started')
    expect(r.text).toContain('timed out after 0.5 s')
    await waitFor(() => !alive(grandchild), 'the grandchild to die')
  })

  it('a grandchild that ignores SIGTERM gets SIGKILL after the grace period', async () => {
    const pidFile = join(dir, 'stubborn.pid')
    const pending = run(
      { command: `(trap '' TERM; exec sleep 300) & echo $! > ${pidFile}; wait`, timeoutMs: 300 },
      { killGraceMs: 300 },
    )
    const grandchild = await pidFrom(pidFile)
    const r = await pending
    expect(r.code).toBe('TIMEOUT')
    await waitFor(() => !alive(grandchild), 'the SIGTERM-ignoring grandchild to die')
  })

  it('abort kills the whole process group and returns the partial output as TOOL_ABORTED', async () => {
    const pidFile = join(dir, 'abort.pid')
    const controller = new AbortController()
    const pending = run(
      { command: `echo partial; sleep 300 & echo $! > ${pidFile}; wait` },
      {},
      controller.signal,
    )
    const grandchild = await pidFrom(pidFile)
    controller.abort()
    const r = await pending
    expect(r.code).toBe('TOOL_ABORTED')
    expect(r.text).toContain('partial')
    await waitFor(() => !alive(grandchild), 'the grandchild to die after abort')
  })

  it('keeps head and tail of huge output in memory, with a note, and the complete output aside', async () => {
    const r = await run({ command: 'seq 1 200000' }, { maxOutputChars: 2000 })
    expect(r.text.startsWith('1\n2\n3\n')).toBe(true)
    expect(r.text).toContain('199999\n200000\n[exit code 0]')
    expect(r.text).toMatch(/\[… [\d,]+ characters of output omitted here …\]/)
    expect(r.text.length).toBeLessThan(2200)
    const stored = await readFile(r.storedAside!.path, 'utf8')
    expect(stored).toBe(`${Array.from({ length: 200000 }, (_, i) => i + 1).join('\n')}\n`)
    expect(r.storedAside!.chars).toBe(stored.length)
  })

  it('stores the complete output of a command printing far more than memory keeps (20 MB)', async () => {
    const r = await run({ command: 'seq 1 2500000' })
    const stored = await readFile(r.storedAside!.path, 'utf8')
    const expected = `${Array.from({ length: 2_500_000 }, (_, i) => i + 1).join('\n')}\n`
    expect(stored.length).toBe(expected.length)
    expect(stored === expected).toBe(true)
    expect(r.text.length).toBeLessThanOrEqual(30_000)
    expect(r.text).toContain(r.storedAside!.path)
    expect(r.text).toContain('[exit code 0]')
  }, 60_000)

  it('the per-call disk cap bounds the stored file and the model is told', async () => {
    const outcome = await runToolCall(
      bashTool({ maxOutputChars: 10_000 }),
      JSON.stringify({ command: 'yes 0123456789 | head -c 5000000' }),
      createToolContext({ cwd: dir }),
      { outputDir: join(dir, '.out'), maxStoredBytes: 1_000_000 },
    )
    const text = textOf(outcome.output)
    expect((await readFile(outcome.storedAside!.path)).length).toBe(1_000_000)
    expect(text).toContain('disk cap')
    expect(text).toContain('[exit code 0]')
  }, 60_000)

  it('NUL bytes and invalid UTF-8 in the output become visible, well-formed text', async () => {
    const r = await run({ command: "printf 'a\\000b\\377c'" })
    expect(r.text).toContain('a\u2400b\uFFFDc')
    expect(JSON.stringify(r.output)).not.toContain('\\u0000')
  })

  it('the runtime cap stores long output aside with the full text', async () => {
    const r = await run({ command: 'seq 1 20000' })
    expect(r.storedAside).toBeDefined()
    const stored = await readFile(r.storedAside!.path, 'utf8')
    expect(stored.startsWith('1\n2\n')).toBe(true)
    expect(stored).toContain('\n20000\n[exit code 0]')
    expect(r.text).toContain(r.storedAside!.path)
  })

  it('returns when the shell exits even if a background child keeps the output pipe open', async () => {
    const pidFile = join(dir, 'bg.pid')
    const r = await run({ command: `sleep 300 & echo $! > ${pidFile}; echo done` })
    leftovers.push(await pidFrom(pidFile))
    expect(r.text).toContain('done\n')
    expect(r.text).toContain('[exit code 0]')
    expect(r.text).toContain('background processes')
  })

  it('reports the latest output line as progress', async () => {
    const seen: string[] = []
    const ctx = createToolContext({ cwd: dir, progress: (p) => seen.push(p.message) })
    await runToolCall(bashTool(), JSON.stringify({ command: 'echo first-line' }), ctx)
    expect(seen).toEqual(['first-line'])
  })

  it('facts give the command (and the cwd paths when given); annotations are truthful', () => {
    const bash = bashTool()
    expect(bash.facts?.({ command: 'rm -rf x' }, dir)).toEqual({ command: 'rm -rf x' })
    expect(bash.facts?.({ command: 'ls', cwd: 'sub' }, dir)).toEqual({
      command: 'ls',
      rawPaths: ['sub'],
      resolvedPaths: [join(dir, 'sub')],
    })
    expect(bash.annotations).toEqual({
      readOnly: false,
      destructive: true,
      openWorld: true,
      idempotent: false,
    })
    expect(bash.isConcurrencySafe).toBe(false)
    expect(shellTools().map((t) => t.name)).toEqual(['bash'])
  })

  describe('environment', () => {
    const saved: Record<string, string | undefined> = {}
    const set = (vars: Record<string, string>) => {
      for (const [k, v] of Object.entries(vars)) {
        saved[k] = process.env[k]
        process.env[k] = v
      }
    }
    afterEach(() => {
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k]
        else process.env[k] = v
      }
    })

    it('credentials of the agent process do not reach the command by default', async () => {
      set({
        DEEPSEEK_API_KEY: 'sk-test-secret',
        GITHUB_TOKEN: 'ghp_test',
        KEEL_PG_URL: 'postgres://keel:hunter2@127.0.0.1/keel',
        KEEL_HARMLESS: 'visible',
      })
      const r = await run({
        command:
          'echo "[$DEEPSEEK_API_KEY][$GITHUB_TOKEN][$KEEL_PG_URL][$KEEL_HARMLESS]"; env | grep -c -e sk-test -e hunter2 -e ghp_',
      })
      expect(r.text).toContain('[][][][visible]')
      expect(r.text).toMatch(/^0$/m)
      expect(r.text).not.toContain('sk-test-secret')
    })

    it('allow and deny lists and secret values configure what is inherited', async () => {
      set({ DEEPSEEK_API_KEY: 'sk-test-secret', KEEL_HARMLESS: 'visible', ODD_NAME: 'adapter-key-42' })
      const r = await run(
        { command: 'echo "[$DEEPSEEK_API_KEY][$KEEL_HARMLESS][$ODD_NAME][$EXTRA]"' },
        {
          environment: { allow: ['DEEPSEEK_*'], deny: ['KEEL_*'], secretValues: ['adapter-key-42'] },
          env: { EXTRA: 'set' },
        },
      )
      expect(r.text).toContain('[sk-test-secret][][][set]')
    })
  })
})
