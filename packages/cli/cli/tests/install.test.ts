import { execFile } from 'node:child_process'
import { cp, mkdir, mkdtemp, rm, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it, onTestFinished } from 'vitest'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../../../', import.meta.url))

/** The working tree as a fresh clone has it: tracked and untracked files, nothing ignored (no node_modules, no dist). */
async function freshCopy(): Promise<string> {
  const { stdout } = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: root,
    maxBuffer: 16 * 1024 * 1024,
  })
  const dir = await mkdtemp(join(tmpdir(), 'keel-fresh-'))
  for (const file of stdout.split('\0').filter((f) => f !== '')) {
    await mkdir(dirname(join(dir, file)), { recursive: true })
    await cp(join(root, file), join(dir, file)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error // deleted in the working tree, not yet in git
    })
  }
  return dir
}

describe('reaching keel as the README says', { timeout: 300_000 }, () => {
  it('on a fresh clone `pnpm install` leaves a compiled keel, and `pnpm build` keeps it working', async () => {
    const dir = await freshCopy()
    onTestFinished(() => rm(dir, { recursive: true, force: true }))
    await run('pnpm', ['install', '--frozen-lockfile', '--offline'], { cwd: dir, timeout: 240_000 })
    const home = await mkdtemp(join(tmpdir(), 'keel-fresh-home-'))
    const env = { ...process.env, KEEL_HOME: home, KEEL_TRACE_START: '1' }
    const bin = join(dir, 'packages/cli/cli/bin/keel.js')
    const started = await run(process.execPath, [bin, 'presets', 'list'], { cwd: dir, env, timeout: 60_000 })
    expect(started.stderr).toContain('keel: start: dist/cli.js (the bundle is current)')
    expect(started.stdout).toMatch(/^coding /mu)
    // `pnpm build` of the CLI (declarations, then the bundle) must not leave a dist/cli.js that
    // imports the workspace's TypeScript (it did: ERR_UNKNOWN_FILE_EXTENSION until dist/ was deleted).
    await run('pnpm', ['--filter', '@keel/cli', 'run', 'build'], { cwd: dir, timeout: 240_000 })
    const built = await run(process.execPath, [bin, 'presets', 'list'], { cwd: dir, env, timeout: 60_000 })
    expect(built.stderr).toContain('keel: start: dist/cli.js (the bundle is current)')
    expect(built.stdout).toMatch(/^coding /mu)
  })

  it('the bin runs the bundle only while the sources it was built from are unchanged', async () => {
    // A package laid out as in the workspace, with a bundle and sources that say which ran.
    const ws = await mkdtemp(join(tmpdir(), 'keel-bin-'))
    onTestFinished(() => rm(ws, { recursive: true, force: true }))
    const pkg = join(ws, 'packages', 'cli', 'cli')
    await mkdir(join(pkg, 'src'), { recursive: true })
    await mkdir(join(pkg, 'dist'), { recursive: true })
    await cp(join(root, 'packages/cli/cli/bin'), join(pkg, 'bin'), { recursive: true })
    await symlink(join(root, 'packages/cli/cli/node_modules'), join(pkg, 'node_modules'))
    await writeFile(join(ws, 'pnpm-workspace.yaml'), 'packages: [packages/*/*]\n')
    await writeFile(join(pkg, 'src', 'cli.ts'), "process.stdout.write('the sources\\n')\n")
    await writeFile(join(pkg, 'dist', 'cli.js'), "process.stdout.write('the bundle\\n')\n")
    const { mtimeMs, size } = await stat(join(pkg, 'src', 'cli.ts'))
    const manifest = { root: '../../../..', inputs: [['../src/cli.ts', mtimeMs, size]] }
    await writeFile(join(pkg, 'dist', 'inputs.json'), JSON.stringify(manifest))
    const keel = async () =>
      await run(process.execPath, [join(pkg, 'bin', 'keel.js')], {
        env: { ...process.env, KEEL_TRACE_START: '1' },
      })
    expect((await keel()).stdout).toBe('the bundle\n')
    await writeFile(join(pkg, 'src', 'cli.ts'), "process.stdout.write('the sources\\n') // edited\n")
    const stale = await keel()
    expect(stale.stdout).toBe('the sources\n')
    expect(stale.stderr).toContain('../src/cli.ts changed since the build')
    // outside the workspace it was built in (an installed copy) the bundle is all there is
    await rm(join(ws, 'pnpm-workspace.yaml'))
    expect((await keel()).stdout).toBe('the bundle\n')
    await rm(join(pkg, 'dist', 'inputs.json'))
    expect((await keel()).stderr).toContain('not built (no dist/inputs.json)')
  })

  it('`npm install --global ./packages/cli/cli` puts a working keel on PATH', async () => {
    const prefix = await mkdtemp(join(tmpdir(), 'keel-global-'))
    await run('npm', ['install', '--global', '--prefix', prefix, './packages/cli/cli'], {
      cwd: root,
      timeout: 120_000,
    })
    const home = await mkdtemp(join(tmpdir(), 'keel-global-home-'))
    const { stdout } = await run('keel', ['presets', 'list'], {
      cwd: tmpdir(),
      env: { ...process.env, PATH: `${join(prefix, 'bin')}${delimiter}${process.env.PATH}`, KEEL_HOME: home },
      timeout: 60_000,
    })
    expect(stdout).toMatch(/^minimal /mu)
    expect(stdout).toMatch(/^coding /mu)
  })

  it('`pnpm keel …` runs from the repository and reads the directory it was typed in', async () => {
    const home = await mkdtemp(join(tmpdir(), 'keel-pnpm-home-'))
    const project = await mkdtemp(join(tmpdir(), 'keel-pnpm-project-'))
    await mkdir(join(project, '.keel', 'presets'), { recursive: true })
    await writeFile(
      join(project, '.keel', 'presets', 'team.json'),
      JSON.stringify({ id: 'team', description: 'the team preset' }),
    )
    // pnpm sets INIT_CWD to where it was typed; drop the one this test runner inherited.
    const { INIT_CWD: _inherited, ...env } = process.env
    const { stdout } = await run('pnpm', ['--dir', root, 'keel', 'presets', 'list'], {
      cwd: project,
      env: { ...env, KEEL_HOME: home },
      timeout: 60_000,
    })
    expect(stdout).toContain('team      the team preset')
  })
})
