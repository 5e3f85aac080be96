import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const script = join(import.meta.dirname, '..', 'new-plugin.ts')
const root = mkdtempSync(join(tmpdir(), 'keel-new-plugin-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

function run(...args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', script, ...args, '--root', root], {
    encoding: 'utf8',
  })
}

describe('pnpm new-plugin', () => {
  it('scaffolds an event-owning plugin package and a changeset', () => {
    const result = run('sticky-notes', '--group', 'notes')
    expect(result.status, result.stderr).toBe(0)
    const dir = join(root, 'packages/notes/sticky-notes')
    const events = readFileSync(join(dir, 'src/events.ts'), 'utf8')
    expect(events).toContain("declare module '@keel/session'")
    expect(events).toContain("'sticky-notes/change': { value: string }")
    expect(events).toContain("registerEvents('@keel/sticky-notes'")
    expect(readFileSync(join(dir, 'src/sticky-notes.ts'), 'utf8')).toContain('stickyNotesProjection')
    expect(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).name).toBe('@keel/sticky-notes')
    expect(existsSync(join(root, '.changeset/sticky-notes-initial.md'))).toBe(true)
  })

  it('refuses a bad name and an existing package without writing', () => {
    const bad = run('Bad_Name')
    expect(bad.status).toBe(2)
    expect(bad.stderr).toContain('kebab-case')
    const again = run('sticky-notes', '--group', 'notes')
    expect(again.status).toBe(1)
    expect(again.stderr).toContain('already exists')
  })
})
