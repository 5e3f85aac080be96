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
