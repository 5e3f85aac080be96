import { describe, expect, it } from 'vitest'
import { findImports, MAX_IMPORTS_PER_FILE, resolveImport } from '../src/index.js'

describe('findImports: Claude Code’s @path rule', () => {
  const cases: Array<[string, string, string[]]> = [
    ['a bare import on its own line', '@docs/style.md', ['docs/style.md']],
    [
      'imports inside prose',
      'See @README.md and @./CONTRIBUTING.md for more.',
      ['README.md', './CONTRIBUTING.md'],
    ],
    [
      'trailing punctuation is not part of the path',
      'Read @docs/a.md, then @docs/b.md.',
      ['docs/a.md', 'docs/b.md'],
    ],
    ['home and absolute paths', '- @~/.keel/mine.md\n- @/etc/team.md', ['~/.keel/mine.md', '/etc/team.md']],
    ['an e-mail address is no import', 'mail me@example.com or ops@corp.io', []],
    ['an inline code span is no import', 'run `npm i @scope/pkg` then read @real.md', ['real.md']],
    ['a fenced block is no import', '```\n@inside.md\n```\n@outside.md', ['outside.md']],
    ['a tilde fence with a longer closer', '~~~\n@in.md\n~~~~\n@out.md', ['out.md']],
    ['a backtick fence is not closed by tildes', '```\n@in.md\n~~~\n@still-in.md\n```\n@out.md', ['out.md']],
    ['duplicates are listed once', '@a.md @a.md @b.md', ['a.md', 'b.md']],
    ['a lone @ and @@ are ignored', 'at @ and @@x', []],
    ['CRLF line ends', '@a.md\r\n@b.md\r\n', ['a.md', 'b.md']],
  ]
  it.each(cases)('%s', (_name, text, expected) => {
    expect(findImports(text)).toEqual(expected)
  })

  it(`follows at most ${MAX_IMPORTS_PER_FILE} imports of one file`, () => {
    const text = Array.from({ length: 80 }, (_, i) => `@f${i}.md`).join('\n')
    expect(findImports(text)).toHaveLength(MAX_IMPORTS_PER_FILE)
  })
})

describe('resolveImport', () => {
  it('resolves against the importing file’s directory, the home, or as given', () => {
    expect(resolveImport('docs/a.md', '/repo/pkg', '/home/me')).toBe('/repo/pkg/docs/a.md')
    expect(resolveImport('../b.md', '/repo/pkg', '/home/me')).toBe('/repo/b.md')
    expect(resolveImport('~/x.md', '/repo', '/home/me')).toBe('/home/me/x.md')
    expect(resolveImport('/etc/../etc/y.md', '/repo', '/home/me')).toBe('/etc/y.md')
  })
})
