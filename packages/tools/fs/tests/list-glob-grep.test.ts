import { symlink } from 'node:fs/promises'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { fsTools, globTool, grepTool, listDirTool } from '../src/index.js'
import { call, cleanup, workspace } from './helpers.js'

let dir: string
afterEach(async () => {
  if (dir) await cleanup(dir)
})

const tree = {
  'src/a.ts': 'export const a = 1\n// TODO fix a\n',
  'src/b.ts': 'import { a } from "./a"\nconsole.log(a)\n',
  'src/deep/c.ts': 'function todo() {}\n// TODO c\n',
  'src/readme.md': '# TODO docs\n',
  '.hidden/h.ts': '// TODO hidden\n',
  'node_modules/pkg/index.ts': '// TODO vendored\n',
  '.git/config': 'TODO git\n',
  'img.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x54, 0x4f, 0x44, 0x4f]),
}

describe('list_dir', () => {
  const list = listDirTool()

  it('lists entries sorted, directories with /, files with sizes, symlinks with targets', async () => {
    dir = await workspace({ 'b.txt': 'hello', 'a/x': '' })
    await symlink('b.txt', join(dir, 'link'))
    const r = await call(list, dir, {})
    expect(r.text.split('\n')).toEqual([`${dir} (3 entries):`, 'a/', 'b.txt  (5 B)', 'link -> b.txt'])
    expect((await call(list, dir, { path: 'a' })).text).toContain('x  (0 B)')
  })

  it('caps the number of entries', async () => {
    dir = await workspace(
      Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`f${String(i).padStart(2, '0')}`, ''])),
    )
    const r = await call(listDirTool({ maxEntries: 10 }), dir, {})
    expect(r.text).toContain('f09')
    expect(r.text).not.toContain('f10')
    expect(r.text).toContain('20 more entries')
  })

  it('errors: FILE_NOT_FOUND, NOT_A_DIRECTORY', async () => {
    dir = await workspace({ 'f.txt': '' })
    expect((await call(list, dir, { path: 'missing' })).code).toBe('FILE_NOT_FOUND')
    expect((await call(list, dir, { path: 'f.txt' })).code).toBe('NOT_A_DIRECTORY')
  })
})

describe('glob', () => {
  const glob = globTool()

  it('finds files by pattern, sorted, including dotfiles, skipping node_modules and .git', async () => {
    dir = await workspace(tree)
    const r = await call(glob, dir, { pattern: '**/*.ts' })
    expect(r.text.split('\n')).toEqual(['.hidden/h.ts', 'src/a.ts', 'src/b.ts', 'src/deep/c.ts', '[4 files]'])
  })

  it('searches under a path and shows paths relative to the working directory', async () => {
    dir = await workspace(tree)
    const r = await call(glob, dir, { pattern: '*.ts', path: 'src' })
    expect(r.text.split('\n')).toEqual(['src/a.ts', 'src/b.ts', '[2 files]'])
  })

  it('includes node_modules when the pattern names it', async () => {
    dir = await workspace(tree)
    expect((await call(glob, dir, { pattern: 'node_modules/**/*.ts' })).text).toContain(
      'node_modules/pkg/index.ts',
    )
  })

  it('says so when nothing matches, and caps the result list', async () => {
    dir = await workspace(tree)
    expect((await call(glob, dir, { pattern: '**/*.rs' })).text).toContain('No files match')
    const capped = await call(globTool({ maxResults: 2 }), dir, { pattern: 'src/**' })
    expect(capped.text.split('\n').slice(0, 2)).toEqual(['src/a.ts', 'src/b.ts'])
    expect(capped.text).toContain('2 more not shown (4 files in total)')
  })

  it('errors: FILE_NOT_FOUND, NOT_A_DIRECTORY', async () => {
    dir = await workspace(tree)
    expect((await call(glob, dir, { pattern: '*', path: 'nope' })).code).toBe('FILE_NOT_FOUND')
    expect((await call(glob, dir, { pattern: '*', path: 'src/a.ts' })).code).toBe('NOT_A_DIRECTORY')
  })
})

describe('grep', () => {
  const grep = grepTool()

  it('finds matching lines with path and line number, skipping binary, node_modules and .git', async () => {
    dir = await workspace(tree)
    const r = await call(grep, dir, { pattern: 'TODO' })
    expect(r.text.split('\n')).toEqual([
      '.hidden/h.ts:1: // TODO hidden',
      'src/a.ts:2: // TODO fix a',
      'src/deep/c.ts:2: // TODO c',
      'src/readme.md:1: # TODO docs',
      '[4 matching lines in 4 files; 1 binary file skipped]',
    ])
  })

  it('filters by glob, searches one file, and matches case-insensitively on request', async () => {
    dir = await workspace(tree)
    expect((await call(grep, dir, { pattern: 'todo', glob: 'src/**/*.ts' })).text.split('\n')[0]).toBe(
      'src/deep/c.ts:1: function todo() {}',
    )
    const ci = await call(grep, dir, { pattern: 'todo', glob: 'src/**/*.ts', ignoreCase: true })
    expect(ci.text).toContain('3 matching lines in 2 files')
    expect(
      (await call(grep, dir, { pattern: 'console\\.log\\((\\w+)\\)', path: 'src/b.ts' })).text,
    ).toContain('src/b.ts:2: console.log(a)')
  })

  it('stops at maxMatches and says there are more', async () => {
    dir = await workspace({ 'many.txt': Array.from({ length: 50 }, (_, i) => `hit ${i}`).join('\n') })
    const r = await call(grep, dir, { pattern: 'hit', maxMatches: 5 })
    expect(r.text.split('\n').filter((l) => l.startsWith('many.txt:'))).toHaveLength(5)
    expect(r.text).toContain('Stopped at 5 matches')
  })

  it('reports no matches without an error', async () => {
    dir = await workspace(tree)
    const r = await call(grep, dir, { pattern: 'zzz_nothing' })
    expect(r.output.isError).toBeUndefined()
    expect(r.text).toContain('No matches')
  })

  it('errors: GREP_INVALID_PATTERN, FILE_NOT_FOUND', async () => {
    dir = await workspace(tree)
    expect((await call(grep, dir, { pattern: '(unclosed' })).code).toBe('GREP_INVALID_PATTERN')
    expect((await call(grep, dir, { pattern: 'x', path: 'nope' })).code).toBe('FILE_NOT_FOUND')
  })
})

describe('fsTools', () => {
  it('returns the six tools with truthful annotations and path facts', () => {
    const tools = fsTools()
    expect(tools.map((t) => t.name)).toEqual([
      'read_file',
      'write_file',
      'edit_file',
      'list_dir',
      'glob',
      'grep',
    ])
    for (const t of tools) {
      const reader = ['read_file', 'list_dir', 'glob', 'grep'].includes(t.name)
      expect(t.annotations.readOnly).toBe(reader)
      expect(t.annotations.destructive).toBe(!reader)
      expect(t.annotations.openWorld).toBe(false)
      expect(t.isConcurrencySafe === true).toBe(reader)
      expect(t.facts).toBeTypeOf('function')
    }
  })
})
