import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../../../', import.meta.url))

describe('reaching keel as the README says', () => {
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
