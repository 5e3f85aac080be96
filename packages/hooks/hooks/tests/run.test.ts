import { readFileSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCommand } from '../src/index.js'
import { alive, eventually, tempDir, writeFile } from './helpers.js'

const sh = ['/bin/sh', '-c'] as const
function run(
  command: string,
  options: { stdin?: string; timeoutMs?: number; maxOutputBytes?: number; cwd?: string } = {},
) {
  return runCommand({
    command,
    shell: [...sh],
    cwd: options.cwd ?? process.cwd(),
    env: process.env,
    stdin: options.stdin ?? '{}',
    timeoutMs: options.timeoutMs ?? 60_000,
    maxOutputBytes: options.maxOutputBytes ?? 1024 * 1024,
  })
}

describe('runCommand with real child processes', () => {
  it('reports exit codes 0, 1, 2, 126, 127 and a signal exactly', async () => {
    const dir = tempDir()
    const notExecutable = writeFile(dir, 'guard.sh', '#!/bin/sh\necho hi\n', 0o644)
    expect((await run('exit 0')).exitCode).toBe(0)
    expect((await run('echo oops >&2; exit 1')).exitCode).toBe(1)
    const two = await run('echo "no way" >&2; exit 2')
    expect(two).toMatchObject({ exitCode: 2, stderr: 'no way\n', timedOut: false })
    expect((await run(notExecutable)).exitCode).toBe(126)
    expect((await run('definitely-not-a-command-keel')).exitCode).toBe(127)
    const killed = await run('kill -TERM $$')
    expect(killed.exitCode).toBeUndefined()
    expect(killed.signal).toBe('SIGTERM')
  })

  it('passes stdin and runs in the given cwd', async () => {
    const dir = tempDir()
    const result = await run('cat; pwd', { stdin: '{"a":1}', cwd: dir })
    expect(result.stdout).toBe(`{"a":1}${realpathSync(dir)}\n`)
  })

  it('kills the whole process group at the deadline, even a grandchild holding stdout', async () => {
    const dir = tempDir()
    const pidFile = join(dir, 'grandchild.pid')
    // The grandchild inherits stdout and outlives its parent's sleep; neither ever exits on its own.
    const result = await run(`sleep 1000 & echo $! > ${pidFile}; echo started; sleep 1000`, {
      timeoutMs: 1500,
    })
    expect(result.timedOut).toBe(true)
    expect(result.exitCode).toBeUndefined()
    const grandchild = Number(readFileSync(pidFile, 'utf8').trim())
    expect(await eventually(() => !alive(grandchild))).toBe(true)
  })

  it('stops waiting after the hook exits even when a background child keeps stdout open', async () => {
    const dir = tempDir()
    const pidFile = join(dir, 'bg.pid')
    const result = await run(`sleep 1000 & echo $! > ${pidFile}; echo done`, { timeoutMs: 120_000 })
    expect(result).toMatchObject({ exitCode: 0, timedOut: false, stdout: 'done\n' })
    process.kill(Number(readFileSync(pidFile, 'utf8').trim()), 'SIGKILL')
  })

  it('bounds huge stdout while draining it all (the hook is not blocked on a full pipe)', async () => {
    const result = await run(
      `node -e "process.stdout.write('x'.repeat(20*1024*1024)); process.stderr.write('end')"`,
      {
        maxOutputBytes: 64 * 1024,
      },
    )
    expect(result.exitCode).toBe(0)
    expect(result.stdout.length).toBe(64 * 1024)
    expect(result.stdoutTruncated).toBe(true)
    expect(result.stderr).toBe('end')
  })

  it('tolerates output that is not UTF-8', async () => {
    const result = await run(
      `python3 -c "import sys; sys.stdout.buffer.write(b'ok \\xff\\xfe\\x80 end'); sys.stderr.buffer.write(b'\\xc3')"`,
    )
    expect(result.exitCode).toBe(0)
    expect(result.stdout).toBe('ok \uFFFD\uFFFD\uFFFD end')
    expect(result.stderr).toBe('\uFFFD')
  })

  it('feeds a slow stdin reader all of a large input', async () => {
    const stdin = JSON.stringify({ content: 'y'.repeat(300_000) })
    const script =
      'import sys,time\nn=0\nwhile True:\n  b=sys.stdin.buffer.read(4096)\n  if not b: break\n  n+=len(b)\n  time.sleep(0.0005)\nprint(n)'
    const dir = tempDir()
    const file = writeFile(dir, 'slow.py', script)
    const result = await run(`python3 ${file}`, { stdin })
    expect(result.exitCode).toBe(0)
    expect(Number(result.stdout.trim())).toBe(Buffer.byteLength(stdin))
  })

  it('does not hang on a hook that never reads stdin, however large the input', async () => {
    const result = await run('echo ignored-stdin; exit 0', { stdin: 'z'.repeat(2 * 1024 * 1024) })
    expect(result).toMatchObject({ exitCode: 0, stdout: 'ignored-stdin\n', timedOut: false })
  })

  it('times out a hook that never reads stdin and never exits', async () => {
    const result = await run('sleep 1000', { stdin: 'z'.repeat(2 * 1024 * 1024), timeoutMs: 1000 })
    expect(result.timedOut).toBe(true)
  })

  it('reports a launch failure instead of throwing', async () => {
    const result = await run('true', { cwd: join(tempDir(), 'missing') })
    expect(result.spawnError).toMatch(/ENOENT/)
    expect(result.exitCode).toBeUndefined()
  })
})
