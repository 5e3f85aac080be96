import { chmod, mkdir, mkdtemp, readFile, realpath, stat, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { editFileTool, readFileTool, writeFileTool } from '../src/index.js'
import { call, cleanup, workspace } from './helpers.js'

let dir: string
afterEach(async () => {
  if (dir) await cleanup(dir)
})

const numbered = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n')

describe('read_file', () => {
  const read = readFileTool()

  it('returns numbered lines of a whole small file', async () => {
    dir = await workspace({ 'a.txt': 'alpha\nbeta\n' })
    const r = await call(read, dir, { path: 'a.txt' })
    expect(r.output.isError).toBeUndefined()
    expect(r.text).toBe('     1\talpha\n     2\tbeta')
  })

  it('reads a line range with offset/limit and says where to continue', async () => {
    dir = await workspace({ 'n.txt': numbered(100) })
    const r = await call(read, dir, { path: 'n.txt', offset: 10, limit: 3 })
    expect(r.text).toContain('    10\tline 10\n    11\tline 11\n    12\tline 12')
    expect(r.text).not.toContain('line 13')
    expect(r.text).toContain('lines 10–12 of 100')
    expect(r.text).toContain('offset 13')
  })

  it('the last page says it is the end', async () => {
    dir = await workspace({ 'n.txt': numbered(5) })
    const r = await call(read, dir, { path: 'n.txt', offset: 4 })
    expect(r.text).toContain('     5\tline 5')
    expect(r.text).toContain('end of the file')
  })

  it('paginates large files by size so one page stays under the page cap', async () => {
    dir = await workspace({ 'big.txt': numbered(50_000) })
    const tool = readFileTool({ maxPageChars: 10_000 })
    const r = await call(tool, dir, { path: 'big.txt' })
    expect(r.storedAside).toBeUndefined()
    expect(r.text.length).toBeLessThan(11_000)
    const next = Number(/offset (\d+) to continue/.exec(r.text)?.[1])
    expect(next).toBeGreaterThan(100)
    expect(r.text).toContain(`line ${next - 1}\n`)
    const r2 = await call(tool, dir, { path: 'big.txt', offset: next, limit: 1 })
    expect(r2.text.startsWith(`${String(next).padStart(6)}\tline ${next}`)).toBe(true)
  })

  it('cuts very long lines with a note', async () => {
    dir = await workspace({ 'wide.txt': 'x'.repeat(5000) })
    const r = await call(readFileTool({ maxLineChars: 100 }), dir, { path: 'wide.txt' })
    expect(r.text).toContain('line truncated: 5,000 characters')
  })

  it('handles CRLF files and empty files', async () => {
    dir = await workspace({ 'crlf.txt': 'a\r\nb\r\n', 'empty.txt': '' })
    expect((await call(read, dir, { path: 'crlf.txt' })).text).toBe('     1\ta\n     2\tb')
    expect((await call(read, dir, { path: 'empty.txt' })).text).toContain('empty')
  })

  it('errors: FILE_NOT_FOUND, NOT_A_FILE, FILE_BINARY, OFFSET_OUT_OF_RANGE, TOOL_INPUT_INVALID', async () => {
    dir = await workspace({
      'bin.dat': Buffer.from([0x89, 0x50, 0x00, 0x01, 0x02]),
      'sub/x.txt': 'x',
      'short.txt': 'one\ntwo',
    })
    const missing = await call(read, dir, { path: 'nope.txt' })
    expect(missing.code).toBe('FILE_NOT_FOUND')
    expect(missing.text).toContain(join(dir, 'nope.txt'))
    expect((await call(read, dir, { path: 'sub' })).code).toBe('NOT_A_FILE')
    expect((await call(read, dir, { path: 'bin.dat' })).code).toBe('FILE_BINARY')
    const past = await call(read, dir, { path: 'short.txt', offset: 3 })
    expect(past.code).toBe('OFFSET_OUT_OF_RANGE')
    expect(past.text).toContain('2 lines')
    expect((await call(read, dir, { path: 'short.txt', offset: 0 })).code).toBe('TOOL_INPUT_INVALID')
  })

  it('resolves absolute paths and reports raw + resolved paths as facts', async () => {
    dir = await workspace({ 'a.txt': 'hi' })
    expect((await call(read, '/', { path: join(dir, 'a.txt') })).text).toBe('     1\thi')
    expect(read.facts?.({ path: '../x' }, dir)).toEqual({
      rawPaths: ['../x'],
      resolvedPaths: [join(dir, '..', 'x')],
    })
  })

  it.skipIf(process.getuid?.() === 0)('PERMISSION_DENIED on an unreadable file', async () => {
    dir = await workspace({ 'secret.txt': 's' })
    await chmod(join(dir, 'secret.txt'), 0o000)
    expect((await call(read, dir, { path: 'secret.txt' })).code).toBe('PERMISSION_DENIED')
  })
})

describe('write_file', () => {
  const write = writeFileTool()

  it('creates parent directories and reports bytes written', async () => {
    dir = await workspace()
    const r = await call(write, dir, { path: 'deep/er/new.txt', content: 'héllo\nworld\n' })
    expect(r.output.isError).toBeUndefined()
    expect(await readFile(join(dir, 'deep/er/new.txt'), 'utf8')).toBe('héllo\nworld\n')
    expect(r.text).toContain('Created deep/er/new.txt: wrote 13 bytes (2 lines)')
  })

  it('overwrites and says how big the file was', async () => {
    dir = await workspace({ 'a.txt': '12345' })
    await call(readFileTool(), dir, { path: 'a.txt' })
    const r = await call(write, dir, { path: 'a.txt', content: 'x' })
    expect(r.text).toContain('Overwrote a.txt: wrote 1 byte')
    expect(r.text).toContain('held 5 bytes')
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('x')
  })

  it('NOT_A_FILE for a directory; NOT_A_DIRECTORY when a parent is a file', async () => {
    dir = await workspace({ 'sub/x': '', file: 'f' })
    expect((await call(write, dir, { path: 'sub', content: 'x' })).code).toBe('NOT_A_FILE')
    expect((await call(write, dir, { path: 'file/child.txt', content: 'x' })).code).toBe('NOT_A_DIRECTORY')
    expect((await stat(join(dir, 'sub'))).isDirectory()).toBe(true)
  })
})

describe('edit_file', () => {
  const edit = editFileTool()

  it('replaces a unique match and shows the edited lines', async () => {
    dir = await workspace({ 'a.ts': 'const a = 1\nconst b = 2\nconst c = 3\n' })
    await call(readFileTool(), dir, { path: 'a.ts' })
    const r = await call(edit, dir, {
      path: 'a.ts',
      oldString: 'const b = 2',
      newString: 'const b = 20\nconst bb = 21',
    })
    expect(r.output.isError).toBeUndefined()
    expect(await readFile(join(dir, 'a.ts'), 'utf8')).toBe(
      'const a = 1\nconst b = 20\nconst bb = 21\nconst c = 3\n',
    )
    expect(r.text).toContain('replaced 1 occurrence at line 2')
    expect(r.text).toContain('     3\tconst bb = 21')
  })

  it('EDIT_AMBIGUOUS with the count and line numbers; the file is untouched', async () => {
    const content = 'x = 1\ny = 2\nx = 1\nz\nx = 1\n'
    dir = await workspace({ 'a.py': content })
    await call(readFileTool(), dir, { path: 'a.py' })
    const r = await call(edit, dir, { path: 'a.py', oldString: 'x = 1', newString: 'x = 2' })
    expect(r.code).toBe('EDIT_AMBIGUOUS')
    expect(r.text).toContain('3 times')
    expect(r.text).toContain('lines 1, 3, 5')
    expect(await readFile(join(dir, 'a.py'), 'utf8')).toBe(content)
  })

  it('replaceAll replaces every occurrence (replacement text is literal, $& is not special)', async () => {
    dir = await workspace({ 'a.py': 'x = 1\ny\nx = 1\n' })
    await call(readFileTool(), dir, { path: 'a.py' })
    const r = await call(edit, dir, {
      path: 'a.py',
      oldString: 'x = 1',
      newString: 'x = $&',
      replaceAll: true,
    })
    expect(r.text).toContain('replaced 2 occurrences')
    expect(await readFile(join(dir, 'a.py'), 'utf8')).toBe('x = $&\ny\nx = $&\n')
  })

  it('EDIT_NO_MATCH, with a hint when only whitespace differs', async () => {
    dir = await workspace({ 'a.txt': '    indented line\n' })
    await call(readFileTool(), dir, { path: 'a.txt' })
    const none = await call(edit, dir, { path: 'a.txt', oldString: 'absent', newString: 'b' })
    expect(none.code).toBe('EDIT_NO_MATCH')
    const ws = await call(edit, dir, { path: 'a.txt', oldString: 'indented line  ', newString: 'b' })
    expect(ws.code).toBe('EDIT_NO_MATCH')
    expect(ws.text).toContain('whitespace')
  })

  it('matches LF text in a CRLF file and keeps CRLF endings', async () => {
    dir = await workspace({ 'w.txt': 'one\r\ntwo\r\nthree\r\n' })
    await call(readFileTool(), dir, { path: 'w.txt' })
    const r = await call(edit, dir, { path: 'w.txt', oldString: 'one\ntwo', newString: 'uno\ndos' })
    expect(r.output.isError).toBeUndefined()
    expect(await readFile(join(dir, 'w.txt'), 'utf8')).toBe('uno\r\ndos\r\nthree\r\n')
  })

  it('errors: EDIT_NO_CHANGE, EDIT_EMPTY_OLD_STRING, FILE_NOT_FOUND, NOT_A_FILE, FILE_BINARY, FILE_TOO_LARGE', async () => {
    dir = await workspace({
      'a.txt': 'abc',
      bin: Buffer.from([1, 0, 2]),
      'd/x': '',
      'big.txt': 'y'.repeat(2000),
    })
    await call(readFileTool(), dir, { path: 'a.txt' })
    expect((await call(edit, dir, { path: 'a.txt', oldString: 'a', newString: 'a' })).code).toBe(
      'EDIT_NO_CHANGE',
    )
    expect((await call(edit, dir, { path: 'a.txt', oldString: '', newString: 'a' })).code).toBe(
      'EDIT_EMPTY_OLD_STRING',
    )
    expect((await call(edit, dir, { path: 'nope', oldString: 'a', newString: 'b' })).code).toBe(
      'FILE_NOT_FOUND',
    )
    expect((await call(edit, dir, { path: 'd', oldString: 'a', newString: 'b' })).code).toBe('NOT_A_FILE')
    expect((await call(edit, dir, { path: 'bin', oldString: 'a', newString: 'b' })).code).toBe('FILE_BINARY')
    const small = editFileTool({ maxFileBytes: 1000 })
    expect((await call(small, dir, { path: 'big.txt', oldString: 'y', newString: 'z' })).code).toBe(
      'FILE_TOO_LARGE',
    )
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('abc')
  })

  it('annotations: readers are read-only and concurrency-safe; writers are destructive and serial', () => {
    expect(readFileTool().annotations).toEqual({
      readOnly: true,
      destructive: false,
      openWorld: false,
      idempotent: true,
    })
    expect(readFileTool().isConcurrencySafe).toBe(true)
    for (const t of [writeFileTool(), editFileTool()]) {
      expect(t.annotations.destructive).toBe(true)
      expect(t.annotations.readOnly).toBe(false)
      expect(t.isConcurrencySafe).toBe(false)
    }
  })
})

describe('a workspace reached through a symlinked alias', () => {
  it('a missing file is FILE_NOT_FOUND (not SYMLINK_ESCAPE); a link out of it is still refused', async () => {
    const base = await realpath(await mkdtemp(join(tmpdir(), 'keel-fs-alias-')))
    const ws = join(base, 'ws')
    await mkdir(join(ws, 'src'), { recursive: true })
    await writeFile(join(base, 'secret.txt'), 'secret\n')
    await symlink(ws, join(base, 'alias'))
    await symlink('../secret.txt', join(ws, 'out.txt'))
    const alias = join(base, 'alias')
    expect((await call(readFileTool(), alias, { path: 'missing.txt' })).code).toBe('FILE_NOT_FOUND')
    expect((await call(readFileTool(), alias, { path: 'src/missing/deeper.txt' })).code).toBe(
      'FILE_NOT_FOUND',
    )
    expect((await call(readFileTool(), alias, { path: 'out.txt' })).code).toBe('SYMLINK_ESCAPE')
    await writeFile(join(ws, 'src', 'a.txt'), 'inside\n')
    expect((await call(readFileTool(), alias, { path: 'src/a.txt' })).text).toContain('inside')
  })
})
