// `pnpm new-plugin` end to end: scaffold into a temporary repository holding copies of the
// core packages, let it run the catalog generator, then typecheck the new package and run its
// tests with the real compiler and vitest — the scaffold must work, not only contain text.
import { spawnSync } from 'node:child_process'
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const repo = join(import.meta.dirname, '..', '..')
const script = join(import.meta.dirname, '..', 'new-plugin.ts')
const root = mkdtempSync(join(tmpdir(), 'keel-new-plugin-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

/** Copies a package's manifest and sources (not its tests or node_modules). */
function copyPackage(rel: string): void {
  for (const part of ['package.json', 'tsconfig.json', 'src']) {
    cpSync(join(repo, rel, part), join(root, rel, part), { recursive: true })
  }
  const modules = join(repo, rel, 'node_modules')
  if (existsSync(modules)) symlinkSync(realpathSync(modules), join(root, rel, 'node_modules'), 'dir')
}

beforeAll(() => {
  for (const rel of ['packages/core/base', 'packages/core/session', 'packages/llm/llm']) copyPackage(rel)
  cpSync(join(repo, 'tsconfig.base.json'), join(root, 'tsconfig.base.json'))
  symlinkSync(join(repo, 'node_modules'), join(root, 'node_modules'), 'dir')
})

function run(...args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', script, ...args, '--root', root], {
    encoding: 'utf8',
    cwd: repo,
  })
}

describe('pnpm new-plugin', () => {
  it('scaffolds a plugin with its event and tool, whose validators are generated, which typechecks and passes its tests', () => {
    const result = run('sticky-notes', '--group', 'notes', '--event', 'pinned', '--tool', 'pin_note')
    expect(result.status, result.stderr + result.stdout).toBe(0)
    const dir = join(root, 'packages/notes/sticky-notes')
    const events = readFileSync(join(dir, 'src/events.ts'), 'utf8')
    expect(events).toContain("declare module '@keel/session'")
    expect(events).toContain("'sticky-notes/pinned': StickyNotesPinned")
    expect(events).not.toContain('registerEvents')
    expect(events).not.toContain('zod')
    expect(readFileSync(join(dir, 'src/tool.ts'), 'utf8')).toContain("name: 'pin_note'")
    expect(JSON.parse(readFileSync(join(dir, 'examples/preset.json'), 'utf8'))).toMatchObject({
      plugins: [{ use: '@keel/sticky-notes' }],
    })
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).dependencies).toMatchObject({
      '@keel/agent': 'workspace:*',
      '@keel/session': 'workspace:*',
      '@keel/tools': 'workspace:*',
    })
    // the generator ran: the validator exists and is registered from the generated module
    const generated = readFileSync(join(dir, 'src/events.generated.ts'), 'utf8')
    expect(generated).toContain(
      'export const stickyNotesPinnedSchema = z.strictObject({ text: z.string().min(1) })',
    )
    expect(generated).toContain('registerEvents("@keel/sticky-notes", eventValidators)')
    expect(readFileSync(join(root, 'docs/persistence-catalog.md'), 'utf8')).toContain('sticky-notes/pinned')
    expect(existsSync(join(root, '.changeset/sticky-notes-initial.md'))).toBe(true)

    // link what `pnpm install` would link, then typecheck and test the package for real
    mkdirSync(join(dir, 'node_modules/@keel'), { recursive: true })
    for (const [name, at] of Object.entries({
      session: 'packages/core/session',
      agent: 'packages/core/agent',
      tools: 'packages/core/tools',
      deepseek: 'packages/llm/deepseek',
      'scripted-server': 'packages/llm/scripted-server',
      store: 'packages/store/store',
    }))
      symlinkSync(join(repo, at), join(dir, `node_modules/@keel/${name}`), 'dir')
    symlinkSync(
      realpathSync(join(repo, 'packages/core/session/node_modules/zod')),
      join(dir, 'node_modules/zod'),
      'dir',
    )
    const tsc = spawnSync(process.execPath, [join(repo, 'node_modules/typescript/bin/tsc'), '-p', dir], {
      encoding: 'utf8',
    })
    expect(tsc.status, tsc.stdout + tsc.stderr).toBe(0)
    const vitest = spawnSync(
      process.execPath,
      [
        join(dirname(realpathSync(join(repo, 'node_modules/vitest/package.json'))), 'vitest.mjs'),
        'run',
        '--root',
        dir,
      ],
      { encoding: 'utf8', env: { ...process.env, CI: '1' } },
    )
    expect(vitest.status, vitest.stdout + vitest.stderr).toBe(0)
    expect(vitest.stdout).toMatch(/2 passed/)
  }, 180_000)

  it('refuses a bad name, a missing event, a --dir inside the packages and an existing package without writing', () => {
    const bad = run('Bad_Name', '--event', 'added')
    expect(bad.status).toBe(2)
    expect(bad.stderr).toContain('kebab-case')
    const noEvent = run('other')
    expect(noEvent.status).toBe(2)
    expect(noEvent.stderr).toContain('--event must be a kebab-case verb')
    const inside = run('other', '--event', 'added', '--dir', join(root, 'packages', 'x', 'other'))
    expect(inside.status).toBe(2)
    expect(inside.stderr).toContain("inside this repository's packages")
    const again = run('sticky-notes', '--group', 'notes', '--event', 'pinned')
    expect(again.status).toBe(1)
    expect(again.stderr).toContain('already exists')
    expect(existsSync(join(root, 'packages/other'))).toBe(false)
  })
})
