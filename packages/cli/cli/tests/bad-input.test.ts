import { spawnSync } from 'node:child_process'
import { chmodSync, existsSync, readdirSync, writeFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { type KeelRig, keelRig, runKeel } from './keel-process.js'

const rigs: KeelRig[] = []
const mounts: string[] = []
afterEach(async () => {
  for (const r of rigs.splice(0)) await r.close()
  for (const m of mounts.splice(0)) spawnSync('umount', ['-l', m])
})
async function rig(): Promise<KeelRig> {
  const r = await keelRig([])
  rigs.push(r)
  return r
}

/** One line on stderr, nothing on stdout, exit 2, no request to the model, nothing stored. */
async function refused(r: KeelRig, args: string[], says: string | RegExp, env = r.env) {
  const run = await runKeel(args, { env, cwd: r.cwd })
  expect(run.stdout, args.join(' ')).toBe('')
  expect(
    run.stderr.split('\n').filter((l) => l !== ''),
    args.join(' '),
  ).toHaveLength(1)
  if (typeof says === 'string') expect(run.stderr).toContain(says)
  else expect(run.stderr).toMatch(says)
  expect(run.code, run.stderr).toBe(2)
  expect(r.server.requests).toHaveLength(0)
  expect(existsSync(join(r.home, 'sessions')), 'no session was stored').toBe(false)
  return run.stderr
}

describe('bad input: one line each, exit 2, nothing written', { timeout: 120_000 }, () => {
  it('flags and commands: unknown, misspelt, empty or out of range, with keel --help named', async () => {
    const r = await rig()
    const url = ['--base-url', r.server.baseURL]
    expect(await refused(r, ['-p', 'x', '--frob', ...url], 'keel: unknown option --frob (see keel --help)'))
    expect(await refused(r, ['-p', 'x', '--presett', 'coding', ...url], 'did you mean --preset?'))
    expect(
      await refused(r, ['-p', 'x', '--output', 'xml', ...url], '--output must be text, json or stream-json'),
    )
    await refused(r, ['-p', 'x', '--output', ...url], '--output needs a value')
    await refused(r, ['-p', 'x', '--store', 'mongo', ...url], 'unknown store "mongo" (from --store)')
    await refused(r, ['fork', 'abc', '--at', 'x', ...url], '--at must be a seq')
    await refused(
      r,
      ['fork', 'abc', '--at', '-1', ...url],
      'keel fork: --at needs a value (one that starts with "-" is written --at=<value>)',
    )
    await refused(
      r,
      ['fork', 'abc', '--at=-1', ...url],
      '--at must be a seq (a non-negative integer), got "-1"',
    )
    await refused(r, ['sessions', 'frob'], 'keel sessions frob is not a command')
    await refused(r, ['sessions', 'lsit'], 'did you mean keel sessions list?')
    await refused(r, ['frob', ...url], 'keel: "frob" is not a command; did you mean keel fork?')
    await refused(r, ['list', ...url], 'did you mean keel sessions list?')
    await refused(r, ['-p', '', ...url], 'the task is empty')
    await refused(r, ['-p', '   ', ...url], 'the task is empty')
    for (const line of [
      await refused(
        r,
        ['-p', 'x', '--model', '', ...url],
        'keel: --model needs a model id, got an empty one',
      ),
      await refused(r, ['-p', 'x', '--base-url', 'not-a-url'], '--base-url must be an http(s) URL'),
      await refused(r, ['-p', 'x', ...url, '--store', 'postgres'], 'set KEEL_PG_URL'),
    ]) {
      expect(line).not.toMatch(/Invalid DeepSeek adapter options|✖|pass \{ url \}/u)
    }
    for (const flag of ['--version', '-V']) {
      const v = await runKeel([flag], { env: r.env })
      expect(v.stdout).toMatch(/^keel \d+\.\d+\.\d+\n$/u)
      expect(v.code).toBe(0)
    }
  })

  it('a pasted 100 kB value is not echoed back whole: each refusal stays one short line', async () => {
    const r = await rig()
    const url = ['--base-url', r.server.baseURL]
    const big = 'x'.repeat(100_000)
    for (const args of [
      ['-p', 'x', '--preset', big, ...url],
      ['-p', 'x', '--store', big, ...url],
      ['-p', 'x', '--output', big, ...url],
      ['-p', 'x', '--permissions', big, ...url],
      ['-p', 'x', `--${big}`, ...url],
      ['sessions', big],
      ['fork', 'abc', '--at', big, ...url],
    ]) {
      const line = await refused(r, args, /^keel: /u)
      expect(line.length, args.map((a) => a.slice(0, 20)).join(' ')).toBeLessThan(1_000)
    }
  })

  it('--cwd must exist and be a directory; nothing is created', async () => {
    const r = await rig()
    const missing = join(r.cwd, 'no', 'such', 'dir')
    await refused(
      r,
      ['-p', 'x', '--cwd', missing, '--base-url', r.server.baseURL],
      `--cwd ${missing} does not exist`,
    )
    expect(existsSync(join(r.cwd, 'no'))).toBe(false)
    const file = join(r.cwd, 'a-file')
    writeFileSync(file, 'x')
    await refused(
      r,
      ['-p', 'x', '--cwd', file, '--base-url', r.server.baseURL],
      `--cwd ${file} is not a directory`,
    )
    await refused(r, ['presets', 'list', '--cwd', missing], 'does not exist')
  })

  it('a KEEL_HOME that is a file, or read-only, is one typed line naming the path', async () => {
    const r = await rig()
    const asFile = join(r.cwd, 'home-file')
    writeFileSync(asFile, 'not a directory')
    const env = { ...r.env, KEEL_HOME: asFile }
    const args = ['-p', 'x', '--base-url', r.server.baseURL]
    await refused(r, args, `keel: KEEL_HOME_UNUSABLE: KEEL_HOME ${asFile} is a file, not a directory`, env)
    await refused(r, ['sessions', 'list'], `KEEL_HOME ${asFile} is a file, not a directory`, env)
    await refused(r, ['presets', 'list'], `KEEL_HOME ${asFile} is a file`, env)
    // read-only: a read-only tmpfs (as root, who may write anywhere else), or a mode-555 directory
    const ro = await mkdtemp(join(tmpdir(), 'keel-ro-home-'))
    if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'ro,size=64k', 'tmpfs', ro]).status === 0) mounts.push(ro)
    else chmodSync(ro, 0o555)
    const line = await refused(
      r,
      args,
      `keel: KEEL_HOME_UNUSABLE: KEEL_HOME ${ro} cannot hold new sessions: ${ro} `,
      {
        ...r.env,
        KEEL_HOME: ro,
      },
    )
    expect(line).toMatch(/read-only file system|not writable/u)
    expect(readdirSync(ro)).toEqual([])
  })
})
