import { chmod, lstat, mkdir, readdir, readFile, readlink, stat, symlink, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { Session } from '@keel/session'
import { createToolContext, runToolCall } from '@keel/tools'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { editFileTool, globTool, grepTool, listDirTool, readFileTool, writeFileTool } from '../src/index.js'
import { call, cleanup, sessionFor, textOf, workspace } from './helpers.js'

let dir: string
afterEach(async () => {
  if (dir) await cleanup(dir)
})

const read = readFileTool()
const edit = editFileTool()
const write = writeFileTool()

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('abort and deadlines', () => {
  it('write_file under /proc/self/cwd/.. returns an error instead of spinning in mkdir, and the process stays usable', async () => {
    dir = await workspace({ 'ok.txt': 'still readable' })
    // Node's recursive mkdir loops forever on /proc/self/outside (lexically what this path is);
    // six spinning calls would take all four libuv threads, and the readFile below would hang.
    for (let i = 0; i < 6; i++) {
      const r = await call(write, dir, { path: `/proc/self/cwd/../outside${i}/x`, content: 'x' })
      expect(r.code).toMatch(/^(FS_ERROR|FILE_NOT_FOUND|PERMISSION_DENIED)$/)
    }
    expect(await readFile(join(dir, 'ok.txt'), 'utf8')).toBe('still readable')
  }, 30_000)

  it('every fs tool looks at its own signal (called directly, without the pre-check of the runtime)', async () => {
    dir = await workspace({ 'a.txt': 'a\n', 'sub/b.txt': 'b\n' })
    await call(read, dir, { path: 'a.txt' })
    const controller = new AbortController()
    controller.abort()
    const ctx = createToolContext({ cwd: dir, signal: controller.signal, session: sessionFor(dir) })
    const calls: Array<[{ name: string; call(input: never, c: typeof ctx): Promise<unknown> }, unknown]> = [
      [read, { path: 'a.txt' }],
      [write, { path: 'new.txt', content: 'x' }],
      [edit, { path: 'a.txt', oldString: 'a', newString: 'b' }],
      [listDirTool(), {}],
      [globTool(), { pattern: '**/*' }],
      [grepTool(), { pattern: 'a' }],
      [grepTool({ engine: 'javascript' }), { pattern: 'a' }],
    ]
    for (const [tool, args] of calls) {
      await expect(tool.call(args as never, ctx), tool.name).rejects.toMatchObject({ name: 'AbortError' })
    }
    expect(await readdir(dir)).not.toContain('new.txt')
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('a\n')
  })

  it('write_file creates deep parents one by one and refuses a file in the way', async () => {
    dir = await workspace({ file: 'f' })
    expect((await call(write, dir, { path: 'a/b/c/d.txt', content: 'x' })).code).toBeUndefined()
    expect(await readFile(join(dir, 'a/b/c/d.txt'), 'utf8')).toBe('x')
    expect((await call(write, dir, { path: 'file/x/y.txt', content: 'x' })).code).toBe('NOT_A_DIRECTORY')
  })
})

describe('encodings: every byte outside the edited range is kept', () => {
  it('a Latin-1 file keeps its é (the bug: it became U+FFFD)', async () => {
    dir = await workspace({ 'l.txt': Buffer.from('caf\xe9 au lait\nna\xefve\n', 'latin1') })
    const shown = await call(read, dir, { path: 'l.txt' })
    expect(shown.text).toContain('café au lait')
    const r = await call(edit, dir, { path: 'l.txt', oldString: 'au lait', newString: 'noir' })
    expect(r.code).toBeUndefined()
    expect(r.text).toContain('latin-1')
    expect(await readFile(join(dir, 'l.txt'))).toEqual(Buffer.from('caf\xe9 noir\nna\xefve\n', 'latin1'))
    const r2 = await call(edit, dir, { path: 'l.txt', oldString: 'café', newString: 'thé' })
    expect(r2.code).toBeUndefined()
    expect(await readFile(join(dir, 'l.txt'))).toEqual(Buffer.from('th\xe9 noir\nna\xefve\n', 'latin1'))
  })

  it('a character the Latin-1 file cannot hold is refused with FILE_ENCODING_MISMATCH; the file is untouched', async () => {
    const bytes = Buffer.from('price: 5 EUR\n\xff\n', 'latin1')
    dir = await workspace({ 'p.txt': bytes })
    await call(read, dir, { path: 'p.txt' })
    const r = await call(edit, dir, { path: 'p.txt', oldString: 'EUR', newString: '€' })
    expect(r.code).toBe('FILE_ENCODING_MISMATCH')
    expect(r.text).toContain('U+20AC')
    expect(await readFile(join(dir, 'p.txt'))).toEqual(bytes)
  })

  it('UTF-8 with a byte-order mark keeps it; UTF-16 is refused as FILE_ENCODING_UNSUPPORTED', async () => {
    dir = await workspace({
      'bom.txt': Buffer.from('\ufeffhello wörld\n', 'utf8'),
      'u16.txt': Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('hi\n', 'utf16le')]),
    })
    await call(read, dir, { path: 'bom.txt' })
    expect(
      (await call(edit, dir, { path: 'bom.txt', oldString: 'hello', newString: 'bye' })).code,
    ).toBeUndefined()
    expect(await readFile(join(dir, 'bom.txt'))).toEqual(Buffer.from('\ufeffbye wörld\n', 'utf8'))
    expect((await call(read, dir, { path: 'u16.txt' })).code).toBe('FILE_ENCODING_UNSUPPORTED')
  })

  it('property: editing an ASCII marker in arbitrary non-NUL bytes changes exactly the marker', async () => {
    dir = await workspace()
    const body = fc
      .uint8Array({ minLength: 0, maxLength: 300 })
      .map((a) => Buffer.from(a.map((b) => (b === 0 ? 1 : b))))
    let n = 0
    await fc.assert(
      fc.asyncProperty(body, body, async (before, after) => {
        const path = `f${n++}.bin.txt`
        const original = Buffer.concat([before, Buffer.from('<<MARK>>'), after])
        await writeFile(join(dir, path), original)
        await call(read, dir, { path })
        const r = await call(edit, dir, {
          path,
          oldString: '<<MARK>>',
          newString: '[[done]]',
          replaceAll: true,
        })
        if (r.code !== undefined) return r.code === 'EDIT_AMBIGUOUS' // the random bytes may contain the marker
        const expected = Buffer.from(original.toString('latin1').split('<<MARK>>').join('[[done]]'), 'latin1')
        expect(await readFile(join(dir, path))).toEqual(expected)
        return true
      }),
      { numRuns: 60, seed: 20261130 },
    )
  }, 60_000)
})

describe('atomic writes', () => {
  it('edit and write replace the file by rename, keep its mode and leave no temporary file', async () => {
    dir = await workspace({ 'run.sh': '#!/bin/sh\necho one\n' })
    const path = join(dir, 'run.sh')
    await chmod(path, 0o751)
    const inode = (await stat(path)).ino
    await call(read, dir, { path: 'run.sh' })
    expect(
      (await call(edit, dir, { path: 'run.sh', oldString: 'one', newString: 'two' })).code,
    ).toBeUndefined()
    const after = await stat(path)
    expect(after.mode & 0o7777).toBe(0o751)
    expect(after.ino).not.toBe(inode) // a new file renamed into place, not an in-place rewrite
    expect(
      (await call(write, dir, { path: 'run.sh', content: '#!/bin/sh\necho three\n' })).code,
    ).toBeUndefined()
    expect((await stat(path)).mode & 0o7777).toBe(0o751)
    expect(await readdir(dir)).toEqual(['run.sh'])
  })

  it('writing through a symbolic link replaces its target and keeps the link', async () => {
    dir = await workspace({ 'real.txt': 'old\n' })
    await symlink('real.txt', join(dir, 'alias.txt'))
    await call(read, dir, { path: 'alias.txt' })
    expect(
      (await call(edit, dir, { path: 'alias.txt', oldString: 'old', newString: 'new' })).code,
    ).toBeUndefined()
    expect((await lstat(join(dir, 'alias.txt'))).isSymbolicLink()).toBe(true)
    expect(await readlink(join(dir, 'alias.txt'))).toBe('real.txt')
    expect(await readFile(join(dir, 'real.txt'), 'utf8')).toBe('new\n')
  })
})

describe('a file changed since the model read it is not overwritten', () => {
  it('edit before any read: FILE_NOT_READ; after a read: allowed; consecutive own edits: allowed', async () => {
    dir = await workspace({ 'a.txt': 'one two three\n' })
    expect((await call(edit, dir, { path: 'a.txt', oldString: 'one', newString: '1' })).code).toBe(
      'FILE_NOT_READ',
    )
    await call(read, dir, { path: 'a.txt' })
    expect((await call(edit, dir, { path: 'a.txt', oldString: 'one', newString: '1' })).code).toBeUndefined()
    expect((await call(edit, dir, { path: 'a.txt', oldString: 'two', newString: '2' })).code).toBeUndefined()
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('1 2 three\n')
  })

  it('a change on disk after the read: FILE_CHANGED_SINCE_READ, the other change survives; a new read allows the edit', async () => {
    dir = await workspace({ 'a.txt': 'alpha\nbeta\n' })
    await call(read, dir, { path: 'a.txt' })
    await sleep(50) // the user saves a little later
    await writeFile(join(dir, 'a.txt'), 'alpha\nbeta\ngamma (added by the user)\n')
    const r = await call(edit, dir, { path: 'a.txt', oldString: 'beta', newString: 'BETA' })
    expect(r.code).toBe('FILE_CHANGED_SINCE_READ')
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toContain('gamma (added by the user)')
    const w = await call(write, dir, { path: 'a.txt', content: 'clobber' })
    expect(w.code).toBe('FILE_CHANGED_SINCE_READ')
    await sleep(50)
    await call(read, dir, { path: 'a.txt' })
    expect(
      (await call(edit, dir, { path: 'a.txt', oldString: 'beta', newString: 'BETA' })).code,
    ).toBeUndefined()
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('alpha\nBETA\ngamma (added by the user)\n')
  })

  it('a read whose result left the surface (a compaction replaced it) no longer counts: FILE_NOT_READ until read again', async () => {
    dir = await workspace({ 'a.txt': 'one two three\n', 'b.txt': 'bee\n' })
    await call(read, dir, { path: 'a.txt' })
    await call(read, dir, { path: 'b.txt' })
    const session = sessionFor(dir)
    const results = session.events.filter((e) => e.type === 'tool/result')
    const readA = results[0]!
    if (readA.type !== 'tool/result') throw new Error('not a result')
    // what a compaction does: a placeholder replaces the output of the read of a.txt
    session.append(
      'tool/result',
      {
        ...readA.data,
        message: {
          ...readA.data.message,
          content: [{ type: 'text', text: '[Output pruned by compaction]' }],
        },
      },
      { surfaceOp: { op: 'replace', startSeq: readA.seq, endSeq: readA.seq }, sourceEventSeqs: [readA.seq] },
    )
    const refused = await call(edit, dir, { path: 'a.txt', oldString: 'one', newString: '1' })
    expect(refused.code).toBe('FILE_NOT_READ')
    expect(refused.text).toContain(
      `no longer in your context (a compaction replaced it; session log seq ${readA.seq})`,
    )
    expect(await readFile(join(dir, 'a.txt'), 'utf8')).toBe('one two three\n')
    // the read of b.txt is still on the surface
    expect((await call(edit, dir, { path: 'b.txt', oldString: 'bee', newString: 'B' })).code).toBeUndefined()
    // reading a.txt again brings it back
    await call(read, dir, { path: 'a.txt' })
    expect((await call(edit, dir, { path: 'a.txt', oldString: 'one', newString: '1' })).code).toBeUndefined()
  })

  it('write_file: a new file needs no read; overwriting an unread file is FILE_NOT_READ', async () => {
    dir = await workspace({ 'exists.txt': 'keep me' })
    expect((await call(write, dir, { path: 'fresh.txt', content: 'x' })).code).toBeUndefined()
    expect((await call(write, dir, { path: 'exists.txt', content: 'x' })).code).toBe('FILE_NOT_READ')
    expect(await readFile(join(dir, 'exists.txt'), 'utf8')).toBe('keep me')
    expect((await call(write, dir, { path: 'fresh.txt', content: 'y' })).code).toBeUndefined()
  })

  it('the read state comes from the log: a session rebuilt from the same events knows the read', async () => {
    dir = await workspace({ 'a.txt': 'x\n' })
    await call(read, dir, { path: 'a.txt' })
    const copy = Session.create('fs-rebuilt', {}, sessionFor(dir).events)
    const ctx = createToolContext({ cwd: dir, session: copy })
    const r = await runToolCall(edit, JSON.stringify({ path: 'a.txt', oldString: 'x', newString: 'y' }), ctx)
    expect(r.output.errorCode).toBeUndefined()
    const blank = createToolContext({ cwd: dir })
    const r2 = await runToolCall(
      edit,
      JSON.stringify({ path: 'a.txt', oldString: 'y', newString: 'z' }),
      blank,
    )
    expect(textOf(r2.output)).toContain('has not been read')
  })

  it('requireRead: false turns the check off', async () => {
    dir = await workspace({ 'a.txt': 'x\n' })
    await mkdir(join(dir, 'd'))
    const r = await call(editFileTool({ requireRead: false }), dir, {
      path: 'a.txt',
      oldString: 'x',
      newString: 'y',
    })
    expect(r.code).toBeUndefined()
  })
})
