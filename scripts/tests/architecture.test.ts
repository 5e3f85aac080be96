import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../', import.meta.url))

/** Every workspace package: name → its `@keel/*` dependencies (short names, sorted). */
function manifests(): Map<string, string[]> {
  const out = new Map<string, string[]>()
  for (const group of readdirSync(join(root, 'packages'))) {
    for (const name of readdirSync(join(root, 'packages', group))) {
      let text: string
      try {
        text = readFileSync(join(root, 'packages', group, name, 'package.json'), 'utf8')
      } catch {
        continue
      }
      const manifest = JSON.parse(text) as { name: string; dependencies?: Record<string, string> }
      const deps = Object.keys(manifest.dependencies ?? {})
        .filter((d) => d.startsWith('@keel/'))
        .map((d) => d.slice('@keel/'.length))
        .sort()
      out.set(manifest.name, deps)
    }
  }
  return out
}

/** The package picture of docs/architecture.md: name → { layer, deps }. */
function picture(): Map<string, { layer: number; deps: string[] }> {
  const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8')
  const section = doc.slice(doc.indexOf('## Packages and dependencies'))
  const block = section.slice(section.indexOf('```') + 3, section.indexOf('```', section.indexOf('```') + 3))
  const out = new Map<string, { layer: number; deps: string[] }>()
  let layer = -1
  for (const line of block.split('\n')) {
    if (line.trim() === '') continue
    const m = /^(?:layer (\d+))?\s+(@keel\/[a-z-]+)\s*(?:→\s*(.+))?$/u.exec(line)
    if (!m) throw new Error(`docs/architecture.md: cannot read the picture line ${JSON.stringify(line)}`)
    if (m[1] !== undefined) layer = Number(m[1])
    const deps = (m[3] ?? '')
      .split(',')
      .map((d) => d.trim())
      .filter((d) => d !== '')
    out.set(m[2]!, { layer, deps })
  }
  return out
}

describe('docs/architecture.md', () => {
  it('draws every package with exactly its manifest dependencies, each in a lower layer', () => {
    const real = manifests()
    const drawn = picture()
    expect([...drawn.keys()].sort()).toEqual([...real.keys()].sort())
    for (const [name, { layer, deps }] of drawn) {
      expect({ name, deps: [...deps].sort() }).toEqual({ name, deps: real.get(name) })
      for (const dep of deps) {
        expect({ name, dep, lower: drawn.get(`@keel/${dep}`)!.layer < layer }).toEqual({
          name,
          dep,
          lower: true,
        })
      }
    }
  })

  it('is self-contained: it points at no document outside the repository', () => {
    const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8')
    expect(doc).not.toMatch(/DESIGN\.md|\/work\/shared|seeds\//u)
  })
})

describe('references', () => {
  it('name no section of a design document the repository does not hold (DESIGN and a section sign)', () => {
    const found: string[] = []
    const walk = (at: string): void => {
      for (const entry of readdirSync(at, { withFileTypes: true })) {
        if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue
        const path = join(at, entry.name)
        if (entry.isDirectory()) walk(path)
        else if (
          /\.(ts|md|json)$/u.test(entry.name) &&
          new RegExp(`DESIGN\\s*${'\u00a7'}`, 'u').test(readFileSync(path, 'utf8'))
        )
          found.push(path.slice(root.length))
      }
    }
    for (const dir of ['packages', 'scripts', 'docs']) walk(join(root, dir))
    expect(found).toEqual([])
  })
})

/** Source files of a package folder's `src/`, generated ones excluded. */
function sources(dir: string): Array<{ file: string; text: string }> {
  const out: Array<{ file: string; text: string }> = []
  const walk = (at: string): void => {
    for (const entry of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (entry.name.endsWith('.ts') && !entry.name.includes('.generated.')) {
        out.push({ file: path.slice(root.length), text: readFileSync(path, 'utf8') })
      }
    }
  }
  walk(dir)
  return out
}

/** The groups whose packages are the agent, its parts and the stores; every other package is a plugin (or composes them). */
const CORE_GROUPS = new Set(['core', 'llm', 'store', 'tools', 'cli'])

/** Plugin package folders: `packages/<group>/<name>` outside {@link CORE_GROUPS}. */
function pluginFolders(): Array<{ name: string; dir: string }> {
  const out: Array<{ name: string; dir: string }> = []
  for (const group of readdirSync(join(root, 'packages'))) {
    if (CORE_GROUPS.has(group)) continue
    for (const name of readdirSync(join(root, 'packages', group))) {
      const dir = join(root, 'packages', group, name)
      try {
        const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name: string }
        out.push({ name: manifest.name, dir })
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      }
    }
  }
  return out
}

/** A module-level collection keyed by a session, a store handle or an agent: a hidden channel between plugins. */
export const SESSION_KEYED_GLOBAL =
  /^(?:export\s+)?(?:const|let|var)\s+\w+\s*(?::[^=]+)?=\s*new\s+(?:Weak)?(?:Map|Set)\s*<\s*(?:Session|SessionHandle|StoreHandle|Agent)\b/mu

describe('plugins cooperate only through the host', () => {
  it('the rule reads what it means to refuse', () => {
    expect(SESSION_KEYED_GLOBAL.test('const slots = new WeakMap<Session, ApprovalAnswerer[]>()')).toBe(true)
    expect(SESSION_KEYED_GLOBAL.test('export const running = new WeakSet<Session>()')).toBe(true)
    expect(SESSION_KEYED_GLOBAL.test('let byAgent: Map<Agent, X> = new Map<Agent, X>()')).toBe(true)
    expect(SESSION_KEYED_GLOBAL.test('  readonly #calls = new Map<string, number>()')).toBe(false)
    expect(SESSION_KEYED_GLOBAL.test('const sandboxed = new WeakSet<object>()')).toBe(false)
  })

  it('no plugin keeps module-level state keyed by a session or agent', () => {
    const found = pluginFolders().flatMap(({ dir }) =>
      sources(join(dir, 'src')).flatMap(({ file, text }) =>
        text
          .split('\n')
          .map((line, i) => ({ line, at: `${file}:${i + 1}` }))
          .filter(({ line }) => SESSION_KEYED_GLOBAL.test(line))
          .map(({ at }) => at),
      ),
    )
    expect(found).toEqual([])
  })

  it("a plugin reaches another plugin's package for types only (services and events), never its code", () => {
    const plugins = pluginFolders().filter(({ name }) => name !== '@keel/presets')
    const names = new Set(plugins.map((p) => p.name))
    const found: string[] = []
    for (const { name, dir } of plugins) {
      for (const { file, text } of sources(join(dir, 'src'))) {
        for (const match of text.matchAll(/^import\s+(type\s+)?[^;]*?from\s+'(@keel\/[a-z-]+)'/gmsu)) {
          const [, typeOnly, target] = match
          if (target !== name && names.has(target!) && !typeOnly) found.push(`${file}: ${target}`)
        }
      }
    }
    expect(found).toEqual([])
  })
})
