import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import fc from 'fast-check'
import { afterEach, describe, expect, it } from 'vitest'
import { cutPoint, type LoadOptions, loadInstructions, readBounded } from '../src/index.js'

const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A temporary tree: `files` maps relative paths to contents; returns its real root. */
function tree(files: Record<string, string>): string {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'keel-instr-')))
  dirs.push(root)
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

function options(cwd: string, over: Partial<LoadOptions> = {}): LoadOptions {
  return {
    cwd,
    home: '/nonexistent-home',
    fileNames: ['AGENTS.md', 'CLAUDE.md', '.keel/AGENTS.md'],
    maxFileBytes: 32_768,
    maxTotalBytes: 65_536,
    maxImportDepth: 5,
    mayReadOutside: () => false,
    ...over,
  }
}

describe('loadInstructions', () => {
  it('reads every file from the git root down to the working directory, then the user’s, in that order', async () => {
    const root = tree({
      '.git/HEAD': 'ref: refs/heads/main\n',
      'AGENTS.md': 'root agents\n',
      'CLAUDE.md': 'root claude\n',
      '.keel/AGENTS.md': 'root keel\n',
      'pkg/AGENTS.md': 'pkg agents\n',
      'pkg/sub/CLAUDE.md': 'sub claude\n',
      'home/.keel/AGENTS.md': 'mine\n',
    })
    const bundle = await loadInstructions(
      options(join(root, 'pkg/sub'), { userFile: join(root, 'home/.keel/AGENTS.md') }),
    )
    expect(bundle.root).toBe(root)
    expect(bundle.files.map((f) => [f.path, f.scope, f.text])).toEqual([
      ['AGENTS.md', 'project', 'root agents\n'],
      ['CLAUDE.md', 'project', 'root claude\n'],
      ['.keel/AGENTS.md', 'project', 'root keel\n'],
      ['pkg/AGENTS.md', 'project', 'pkg agents\n'],
      ['pkg/sub/CLAUDE.md', 'project', 'sub claude\n'],
      [join(root, 'home/.keel/AGENTS.md'), 'user', 'mine\n'],
    ])
    expect(bundle.files[0]!.sha256).toMatch(/^[0-9a-f]{64}$/)
  })

  it('treats a worktree’s .git file as the root, and a directory without git as its own root', async () => {
    const root = tree({ '.git': 'gitdir: /elsewhere\n', 'AGENTS.md': 'top\n', 'a/AGENTS.md': 'a\n' })
    expect((await loadInstructions(options(join(root, 'a')))).files.map((f) => f.path)).toEqual([
      'AGENTS.md',
      'a/AGENTS.md',
    ])
    const plain = tree({ 'AGENTS.md': 'parent\n', 'child/AGENTS.md': 'child\n' })
    expect((await loadInstructions(options(join(plain, 'child')))).files.map((f) => f.text)).toEqual([
      'child\n',
    ])
  })

  it('cuts a file over the per-file cap on a line boundary, and the rest at the total cap', async () => {
    const line = `${'x'.repeat(99)}\n`
    const root = tree({
      '.git/HEAD': '',
      'AGENTS.md': line.repeat(30),
      'CLAUDE.md': `${'y'.repeat(99)}\n`.repeat(30),
    })
    const bundle = await loadInstructions(options(root, { maxFileBytes: 1050, maxTotalBytes: 1500 }))
    const [first, second] = bundle.files
    expect(first).toMatchObject({ bytes: 3000, deliveredBytes: 1000, cut: 'file-cap' })
    expect(first!.text).toBe(line.repeat(10))
    expect(second).toMatchObject({ bytes: 3000, deliveredBytes: 500, cut: 'total-cap' })
    const third = await loadInstructions(options(root, { maxFileBytes: 1500, maxTotalBytes: 1500 }))
    expect(third.files).toHaveLength(1)
    expect(third.skipped).toEqual([{ path: 'CLAUDE.md', reason: 'total-cap' }])
  })

  it('follows @imports depth first up to the depth limit, once per file (no cycles)', async () => {
    const root = tree({
      '.git/HEAD': '',
      'AGENTS.md': 'top: see @docs/a.md and @missing.md and `@in-code.md`\n',
      'docs/a.md': 'a imports @b.md and @../AGENTS.md\n',
      'docs/b.md': 'b imports @c.md\n',
      'docs/c.md': 'c\n',
      'CLAUDE.md': '@AGENTS.md\n',
    })
    const bundle = await loadInstructions(options(root, { maxImportDepth: 2 }))
    expect(bundle.files.map((f) => [f.path, f.importedBy])).toEqual([
      ['AGENTS.md', undefined],
      ['docs/a.md', 'AGENTS.md'],
      ['docs/b.md', 'docs/a.md'],
      ['CLAUDE.md', undefined],
    ])
    expect(bundle.skipped.map((s) => [s.path, s.reason])).toEqual([
      ['docs/c.md', 'depth'],
      ['AGENTS.md', 'duplicate'],
      ['missing.md', 'not-found'],
      ['AGENTS.md', 'duplicate'],
    ])
  })

  it('never reads outside the project without approval: imports, ../ and symlinks alike', async () => {
    const outside = tree({ 'secret.md': 'TOP SECRET\n' })
    const root = tree({
      '.git/HEAD': '',
      'AGENTS.md': `@${join(outside, 'secret.md')}\n@../x/secret.md\n@link.md\n`,
    })
    symlinkSync(join(outside, 'secret.md'), join(root, 'link.md'))
    symlinkSync(join(outside, 'secret.md'), join(root, 'CLAUDE.md'))
    const refused = await loadInstructions(options(root))
    expect(refused.files.map((f) => f.path)).toEqual(['AGENTS.md'])
    expect(JSON.stringify(refused.files)).not.toContain('TOP SECRET')
    const secret = join(outside, 'secret.md')
    expect(refused.skipped.filter((s) => s.reason === 'outside-project')).toEqual([
      { path: secret, importedBy: 'AGENTS.md', realPath: secret, reason: 'outside-project' },
      { path: 'link.md', importedBy: 'AGENTS.md', realPath: secret, reason: 'outside-project' },
      { path: 'CLAUDE.md', realPath: secret, reason: 'outside-project' },
    ])
    const approved = await loadInstructions(options(root, { mayReadOutside: (real) => real === secret }))
    expect(approved.files.map((f) => [f.path, f.text])).toEqual([
      ['AGENTS.md', expect.any(String)],
      [secret, 'TOP SECRET\n'],
    ])
  })

  it('does not confine the user’s own file, and skips directories, pipes and binary files without blocking', async () => {
    const mine = tree({ 'AGENTS.md': 'mine: @notes.md\n', 'notes.md': 'my notes\n' })
    const root = tree({ '.git/HEAD': '', 'CLAUDE.md': 'bin\u0000ary' })
    mkdirSync(join(root, 'AGENTS.md'))
    execFileSync('mkfifo', [join(root, '.keel-fifo')])
    mkdirSync(join(root, '.keel'))
    symlinkSync(join(root, '.keel-fifo'), join(root, '.keel/AGENTS.md'))
    const bundle = await loadInstructions(options(root, { userFile: join(mine, 'AGENTS.md') }))
    expect(bundle.files.map((f) => f.text)).toEqual(['mine: @notes.md\n', 'my notes\n'])
    expect(bundle.skipped.map((s) => [s.path, s.reason])).toEqual([
      ['AGENTS.md', 'not-a-file'],
      ['CLAUDE.md', 'not-a-file'],
      ['.keel/AGENTS.md', 'not-a-file'],
    ])
  })

  it('delivers a copied CLAUDE.md once', async () => {
    const root = tree({ '.git/HEAD': '', 'AGENTS.md': 'same\n', 'CLAUDE.md': 'same\n' })
    const bundle = await loadInstructions(options(root))
    expect(bundle.files.map((f) => f.path)).toEqual(['AGENTS.md'])
    expect(bundle.skipped).toEqual([
      { path: 'CLAUDE.md', realPath: join(root, 'CLAUDE.md'), reason: 'duplicate' },
    ])
  })
})

describe('cutPoint and readBounded', () => {
  it('never splits a UTF-8 character, and keeps all but the split character or cuts at a late line break', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 200 }), fc.nat(800), (text, at) => {
        const bytes = Buffer.from(text, 'utf8')
        const kept = bytes.subarray(0, Math.min(at, bytes.length))
        const end = cutPoint(kept)
        expect(end).toBeLessThanOrEqual(kept.length)
        const prefix = kept.subarray(0, end)
        expect(Buffer.from(prefix.toString('utf8'), 'utf8').equals(prefix)).toBe(true)
        // Either just before the character the cap split, or after a line break near the end.
        const atLine = end > 0 && kept[end - 1] === 10 && end >= kept.length * 0.75
        expect(atLine || end >= kept.length - 3).toBe(true)
      }),
      { seed: 24, numRuns: 500 },
    )
  })

  it('reports a missing file and reads a whole small one', async () => {
    const root = tree({ 'a.md': 'héllo\n' })
    expect(await readBounded(join(root, 'nope.md'), 100)).toEqual({ kind: 'missing' })
    expect(await readBounded(join(root, 'a.md'), 100)).toEqual({
      kind: 'file',
      realPath: join(root, 'a.md'),
      text: 'héllo\n',
      bytes: 7,
      deliveredBytes: 7,
    })
  })
})
