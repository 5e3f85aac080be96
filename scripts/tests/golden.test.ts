// Old logs stay readable, forever, by test: every committed golden log (one per snapshotted
// format version) is loaded the way verify loads it — every owning and migrating package
// imported for real, through the migration chain — and must pass the current validators,
// lifecycle rules and invariants. The golden log the next snapshot would freeze (from today's
// `@example`s) must load too, so a snapshot is never refused for a placement the log rules forbid.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { generateCatalog, runtimeOf } from '../catalog/generate.js'
import { goldenPath, goldenTypes, renderGolden } from '../catalog/golden.js'
import { readSnapshots } from '../catalog/snapshots.js'

const repo = join(import.meta.dirname, '..', '..')
const tmp = mkdtempSync(join(tmpdir(), 'keel-golden-test-'))
afterAll(() => rmSync(tmp, { recursive: true, force: true }))
const gen = generateCatalog({ root: repo })
const snapshots = readSnapshots(repo)

describe('golden logs', () => {
  it('every snapshotted format version has one, holding every event type of its version', () => {
    expect(snapshots.length).toBeGreaterThan(0)
    for (const s of snapshots)
      expect(goldenTypes(repo, s.version).sort()).toEqual(Object.keys(s.catalog.events).sort())
  })

  it('each loads with the current code through the migration chain, and so does the next one', () => {
    const next = join(tmp, 'next.jsonl')
    writeFileSync(next, renderGolden(gen.model))
    const report = runtimeOf(repo, gen, [
      ...snapshots.map((s) => ({
        version: s.version,
        path: join(repo, goldenPath(s.version)),
        label: goldenPath(s.version),
      })),
      { version: gen.model.formatVersion, path: next, label: 'the golden log of the next snapshot' },
    ])
    expect(report.error).toBeUndefined()
    expect(report.goldens.flatMap((g) => g.problems)).toEqual([])
    expect(report.goldens.map((g) => g.version)).toEqual([
      ...snapshots.map((s) => s.version),
      gen.model.formatVersion,
    ])
  }, 120_000)
})
