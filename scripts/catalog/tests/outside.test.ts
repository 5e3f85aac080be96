// `--package <dir>`: validators for a plugin package outside the repository — its own named
// types included (they are declared in a loaded package, not "outside the repository"), its
// events kept out of the repository's catalog, only its own file written or checked.
import { mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { generateCatalog } from '../generate.js'
import { generateOutside } from '../outside.js'
import { loadProject } from '../workspace.js'
import { cleanRepos, edit, makeRepo, write } from './helpers.js'

const away = realpathSync(mkdtempSync(join(tmpdir(), 'keel-outside-')))
afterAll(() => {
  cleanRepos()
  rmSync(away, { recursive: true, force: true })
})

let n = 0
/** An outside package `@acme/<name>` whose event reaches a named type of its own. */
function outsidePackage(name: string, events = true): string {
  const dir = join(away, `${name}-${++n}`)
  write(dir, 'package.json', JSON.stringify({ name: `@acme/${name}`, version: '0.1.0', type: 'module' }))
  write(dir, 'src/index.ts', "import './events.js'\n")
  write(
    dir,
    'src/events.ts',
    events
      ? `import './events.generated.js'

/** One note. */
export interface Note {
  /** @minLength 1 */
  text: string
}

declare module '@keel/session' {
  interface SessionEventMap {
    /** A note was added. */
    '${name}/added': { note: Note }
  }
}
`
      : 'export const nothing = 1\n',
  )
  return dir
}

describe('gen --package', () => {
  it("writes the package's validators, its own types included, and leaves the repository's catalog alone", () => {
    const root = makeRepo('mini')
    const dir = outsidePackage('notes')
    const before = generateCatalog({ root }).files
    const loaded = loadProject(root, { outside: [dir] })
    const result = generateOutside(root, loaded, false)
    expect(result.failed).toEqual([])
    const generated = readFileSync(join(dir, 'src/events.generated.ts'), 'utf8')
    expect(generated).toContain('export const noteSchema = z.strictObject({ text: z.string().min(1) })')
    expect(generated).toContain('"notes/added": z.strictObject({ note: noteSchema })')
    expect(generated).toContain('registerEvents("@acme/notes", eventValidators)')
    // the repository's files are what they were without the package
    const after = generateCatalog({ root, loaded }).files
    const outsideKeys = Object.keys(after).filter((k) => k.startsWith('..'))
    expect(outsideKeys).toHaveLength(1)
    for (const k of outsideKeys) delete after[k]
    expect(after).toEqual(before)
    // verify: up to date, then stale after an edit of the declaration
    expect(generateOutside(root, loadProject(root, { outside: [dir] }), true).failed).toEqual([])
    edit(dir, 'src/events.ts', (t) => t.replace('  text: string\n', '  text: string\n  pinned?: boolean\n'))
    const stale = generateOutside(root, loadProject(root, { outside: [dir] }), true)
    expect(stale.failed).toHaveLength(1)
    expect(stale.lines.join('\n')).toContain(
      'differs from the sources: run pnpm gen-persistence-catalog --package',
    )
  })

  it('refuses a package without events, and one that is a repository package', () => {
    const root = makeRepo('mini')
    const empty = outsidePackage('empty', false)
    const result = generateOutside(root, loadProject(root, { outside: [empty] }), false)
    expect(result.failed).toHaveLength(1)
    expect(result.lines.join('\n')).toContain('@acme/empty')
    expect(result.lines.join('\n')).toContain('declares no events')
    expect(() => loadProject(root, { outside: [join(root, 'packages/todo/todo')] })).toThrow(
      "is the repository's own package packages/todo/todo",
    )
    expect(() => loadProject(root, { outside: [join(away, 'nowhere')] })).toThrow('no package.json there')
  })
})
