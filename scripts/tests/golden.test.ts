// Old logs stay readable, forever, by test: every committed golden log (one per snapshotted
// format version) is loaded with the current code — the owning packages imported for real,
// through the migration chain — and must pass the current validators, lifecycle rules and
// invariants, holding every event type of its version.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { describe, expect, it } from 'vitest'
import { GOLDEN_DIR, goldenPath } from '../catalog/golden.js'
import { FORMATS_DIR } from '../catalog/snapshots.js'
import { findPackages } from '../catalog/workspace.js'

const repo = join(import.meta.dirname, '..', '..')
const versions = readdirSync(join(repo, GOLDEN_DIR))
  .map((d) => /^v(\d+)$/.exec(d))
  .filter((m): m is RegExpExecArray => m !== null)
  .map((m) => Number(m[1]))
  .sort((a, b) => a - b)
const snapshotVersions = readdirSync(join(repo, FORMATS_DIR))
  .map((f) => /^v(\d+)\.json$/.exec(f))
  .filter((m): m is RegExpExecArray => m !== null)
  .map((m) => Number(m[1]))

type SessionModule = typeof import('@keel/session')

async function importEntry(name: string): Promise<unknown> {
  const pkg = findPackages(repo).find((p) => p.name === name)
  if (!pkg) throw new Error(`package ${name} (an owner in a golden log) is not in this repository`)
  return import(pathToFileURL(pkg.entry).href)
}

describe('golden logs', () => {
  it('every snapshotted format version has one', () => {
    expect(versions).toEqual([...snapshotVersions].sort((a, b) => a - b))
  })

  it.each(versions)('format v%i loads with the current code through the migration chain', async (version) => {
    const snapshot = JSON.parse(readFileSync(join(repo, FORMATS_DIR, `v${version}.json`), 'utf8')) as {
      events: Record<string, { owner: string }>
    }
    const owners = [...new Set(Object.values(snapshot.events).map((e) => e.owner))].sort()
    for (const owner of owners) await importEntry(owner)
    const session = (await importEntry('@keel/session')) as SessionModule
    const [headerLine, ...lines] = readFileSync(join(repo, goldenPath(version)), 'utf8')
      .trim()
      .split('\n')
    const header = JSON.parse(headerLine!) as { id: string; version: number }
    const stored = lines.map((l) => JSON.parse(l) as { type: string })
    // the log holds every event type of its version
    expect(stored.map((e) => e.type).sort()).toEqual(Object.keys(snapshot.events).sort())
    const current = session.SESSION_FORMAT_VERSION
    const events = stored.flatMap((e) => session.migrateEvent(e as never, version, current))
    const loaded = session.Session.create(header.id, { ...header, version: current }, events)
    expect(loaded.nextSeq).toBe(events.length)
    expect(loaded.events.every((e) => !loaded.isOpaque(e.seq))).toBe(true)
  })
})
