import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { globTool, grepTool } from '../src/index.js'
import { findRipgrep } from '../src/search.js'
import { call, cleanup, workspace } from './helpers.js'

let dir: string
afterEach(async () => {
  if (dir) await cleanup(dir)
})

/** The line from the issue: `(a+)+$` backtracks exponentially on it in a JS regex (14 s at 28 characters). */
const evil = `${'a'.repeat(27)}!`

/** Counts event-loop ticks while `work` runs: a blocked loop ticks zero times. */
async function ticksDuring<T>(work: () => Promise<T>): Promise<{ result: T; ticks: number }> {
  let ticks = 0
  const timer = setInterval(() => ticks++, 20)
  try {
    const result = await work()
    return { result, ticks }
  } finally {
    clearInterval(timer)
  }
}

describe('grep cannot be turned into a denial of service', () => {
  // CI installs ripgrep and sets KEEL_REQUIRE_RIPGREP=1, so the ripgrep tests below cannot be skipped there unnoticed
  it.runIf(process.env.KEEL_REQUIRE_RIPGREP === '1')('ripgrep is on PATH where it is required', () => {
    expect(findRipgrep()).toBeDefined()
  })

  it.runIf(findRipgrep() !== undefined)(
    'ripgrep path (rg on PATH): (a+)+$ on a long line answers at once',
    async () => {
      dir = await workspace({ 'f.txt': `${'a'.repeat(5000)}!\nplain aaa\n` })
      const r = await call(grepTool(), dir, { pattern: '(a+)+$' })
      expect(r.code).toBeUndefined()
      expect(r.text).toContain('f.txt:2: plain aaa')
      expect(r.text).not.toContain('f.txt:1:')
    },
    20_000,
  )

  it('JavaScript path (forced): the regex runs in a worker; the loop keeps ticking and the search is stopped with GREP_TIMEOUT', async () => {
    dir = await workspace({ 'f.txt': `${evil}\n` })
    const { result, ticks } = await ticksDuring(() =>
      call(grepTool({ engine: 'javascript', searchTimeoutMs: 1000 }), dir, { pattern: '(a+)+$' }),
    )
    expect(result.code).toBe('GREP_TIMEOUT')
    expect(ticks).toBeGreaterThan(5)
  }, 20_000)

  it('JavaScript path: an abort (Ctrl-C) terminates a running catastrophic match', async () => {
    dir = await workspace({ 'f.txt': `${'a'.repeat(40)}!\n` })
    const controller = new AbortController()
    setTimeout(() => controller.abort(), 300)
    const r = await call(
      grepTool({ engine: 'javascript', searchTimeoutMs: 600_000 }),
      dir,
      { pattern: '(a+)+$' },
      controller.signal,
    )
    expect(r.code).toBe('TOOL_ABORTED')
  }, 20_000)

  it('JavaScript path by PATH: without rg on PATH the auto engine falls back to the worker', async () => {
    dir = await workspace({ 'f.txt': 'foobar\nfoobaz\n' })
    const saved = process.env.PATH
    process.env.PATH = '/nonexistent-keel-bin'
    try {
      expect(findRipgrep()).toBeUndefined()
      const r = await call(grepTool(), dir, { pattern: 'foo(?=baz)' })
      expect(r.text).toContain('f.txt:2: foobaz')
      expect(r.text).not.toContain('f.txt:1:')
    } finally {
      process.env.PATH = saved
    }
  }, 20_000)

  it.runIf(findRipgrep() !== undefined)(
    'both engines give the same answers (and rg hands JS-only syntax to the worker)',
    async () => {
      dir = await workspace({
        'a.txt': 'alpha\nBeta\r\ngamma delta\ncafé\n',
        'b/c.ts': 'const x = 1 // TODO\nlet y\n',
        'latin.txt': Buffer.from('caf\xe9 au lait\n', 'latin1'),
      })
      const cases = [
        { pattern: 'a$' },
        { pattern: 'beta', ignoreCase: true },
        { pattern: '^(const|let)\\b' },
        { pattern: 'café' },
        { pattern: 'TODO', glob: 'b/**' },
        { pattern: '(?<=gamma )delta' },
        { pattern: '(l)\\1' },
      ]
      for (const input of cases) {
        const rg = await call(grepTool({ engine: 'ripgrep' }), dir, input)
        const js = await call(grepTool({ engine: 'javascript' }), dir, input)
        expect(rg.text, JSON.stringify(input)).toBe(js.text)
        expect(rg.code).toBeUndefined()
      }
      const latin = await call(grepTool({ engine: 'ripgrep' }), dir, { pattern: 'au lait' })
      expect(latin.text).toContain('latin.txt:1: café au lait')
    },
    30_000,
  )
})

describe('grep encodings', () => {
  it('a UTF-8 file with a character cut by the 8 KB sniff boundary is searched as UTF-8 by both engines', async () => {
    const text = `${'x'.repeat(8191)}é needle ü\n`
    dir = await workspace({ 'cut.txt': text, 'other.txt': 'needle too\n' })
    for (const engine of ['auto', 'javascript'] as const) {
      const r = await call(grepTool({ engine, maxLineChars: 10_000 }), dir, { pattern: 'é needle ü' })
      expect(r.text, engine).toContain('cut.txt:1:')
      expect(r.text, engine).toContain('é needle ü')
    }
  }, 20_000)
})

describe('facts cover everything a pattern reaches', () => {
  let root: string
  let ws: string
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'keel-fs-reach-'))
    ws = join(root, 'ws')
    await mkdir(join(root, 'outside'), { recursive: true })
    await mkdir(ws)
    await writeFile(join(root, 'outside', 'secret.txt'), 'SECRET=42\n')
    await writeFile(join(ws, 'mine.txt'), 'mine\n')
  })
  afterEach(async () => {
    await cleanup(ws)
    await rm(root, { recursive: true, force: true })
  })

  const within = (files: string[], roots: string[]) =>
    files.every((f) => roots.some((r) => f === r || f.startsWith(`${r}/`)))

  it('glob ../outside/* lists the outside file and its facts name the outside directory', async () => {
    const glob = globTool()
    const facts = glob.facts!({ pattern: '../outside/*' }, ws)
    expect(facts.resolvedPaths).toContain(join(root, 'outside'))
    const r = await call(glob, ws, { pattern: '../outside/*' })
    const listed = r.text.split('\n').filter((l) => l.startsWith('/'))
    expect(listed).toEqual([join(root, 'outside', 'secret.txt')])
    expect(within(listed, facts.resolvedPaths!)).toBe(true)
  })

  it('an absolute glob pattern is judged by its fixed prefix', () => {
    expect(globTool().facts!({ pattern: '/etc/**/*.conf' }, ws).resolvedPaths).toContain('/etc')
  })

  it('grep with glob ../outside/** prints outside lines and its facts name the outside directory', async () => {
    const grep = grepTool()
    const facts = grep.facts!({ pattern: 'SECRET', glob: '../outside/**' }, ws)
    expect(facts.resolvedPaths).toContain(join(root, 'outside'))
    const r = await call(grep, ws, { pattern: 'SECRET', glob: '../outside/**' })
    expect(r.text).toContain('secret.txt:1: SECRET=42')
  })

  it('.. after a wildcard is refused: no fixed directory bounds it', async () => {
    for (const pattern of ['**/../../outside/*', '*/../../outside/*', '{a,../..}/outside/*']) {
      expect((await call(globTool(), ws, { pattern })).code, pattern).toBe('GLOB_PATTERN_ESCAPES')
      expect((await call(grepTool(), ws, { pattern: 'x', glob: pattern })).code, pattern).toBe(
        'GLOB_PATTERN_ESCAPES',
      )
    }
  })

  it('grep and read_file never follow a symlink out of their root; facts pair each path with where it is used', async () => {
    await symlink(join(root, 'outside', 'secret.txt'), join(ws, 'link.txt'))
    await symlink(join(root, 'outside'), join(ws, 'linkdir'))
    for (const input of [
      { pattern: 'SECRET' },
      { pattern: 'SECRET', glob: 'link.txt' },
      { pattern: 'SECRET', glob: 'linkdir/*' },
      { pattern: 'SECRET', path: 'link.txt' },
      { pattern: 'SECRET', path: 'linkdir' },
    ]) {
      const grep = await call(grepTool(), ws, input)
      expect(grep.text, JSON.stringify(input)).not.toContain('SECRET=42')
    }
    expect((await call(grepTool(), ws, { pattern: 'SECRET', path: 'linkdir' })).code).toBe('SYMLINK_ESCAPE')
    const { readFileTool } = await import('../src/index.js')
    const read = await call(readFileTool(), ws, { path: 'link.txt' })
    expect(read.code).toBe('SYMLINK_ESCAPE')
    expect(read.text).not.toContain('SECRET=42')
    expect(read.text).toContain(join(root, 'outside', 'secret.txt'))
    const viaDir = await call(readFileTool(), ws, { path: 'linkdir/secret.txt' })
    expect(viaDir.code).toBe('SYMLINK_ESCAPE')
    // one resolved path per raw path, lexical: the permission check follows the link itself
    expect(readFileTool().facts!({ path: 'link.txt' }, ws)).toEqual({
      rawPaths: ['link.txt'],
      resolvedPaths: [join(ws, 'link.txt')],
    })
    // a link that stays inside is fine
    await symlink('mine.txt', join(ws, 'inner.txt'))
    expect((await call(readFileTool(), ws, { path: 'inner.txt' })).text).toContain('mine')
  })
})
