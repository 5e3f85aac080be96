// Every change is classified against the committed catalog too, not only against the latest
// snapshot. An event added after the snapshot and committed may have written logs; renaming it
// before the next snapshot is, against the snapshot, just a new event ("additive") — but the
// logs written with the old name stop loading. So when gen is about to replace the committed
// catalog, each entry whose committed state was not the snapshot's and now changes worse than
// its change since the snapshot keeps that state in its change record (`superseded`), and the
// record's classification counts it: the rename is breaking, and needs a version bump and a
// migration like any breaking change.
import { spawnSync } from 'node:child_process'
import { existsSync, readFileSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import type { MachineCatalog } from './catalog-json.js'
import { diffCatalogs, RANK } from './diff.js'
import {
  type ChangeRecord,
  entryDigest,
  expectedRecord,
  PLACEHOLDER_NOTE,
  recordPath,
  type Superseded,
} from './records.js'
import type { Snapshot } from './snapshots.js'

/**
 * The catalog as last committed: `git show HEAD:<file>` when the root is a git work tree's top
 * level and HEAD has the file; otherwise the file on disk (the last generated state).
 */
export function committedCatalog(root: string, file: string): MachineCatalog | undefined {
  const top = spawnSync('git', ['-C', root, 'rev-parse', '--show-toplevel'], { encoding: 'utf8' })
  if (top.status === 0 && realpathSync(top.stdout.trim()) === realpathSync(root)) {
    const shown = spawnSync('git', ['-C', root, 'show', `HEAD:${file}`], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    })
    if (shown.status === 0) return parse(shown.stdout)
  }
  const abs = join(root, file)
  return existsSync(abs) ? parse(readFileSync(abs, 'utf8')) : undefined
}

function parse(text: string): MachineCatalog | undefined {
  try {
    return JSON.parse(text) as MachineCatalog
  } catch {
    // An unreadable committed catalog is reported by verify as a differing generated file.
    return undefined
  }
}

/**
 * The records (path → record) that must keep a superseded state because the change from the
 * committed catalog to `current` is worse, for some entry, than its change since `latest`.
 * Returns only records that change; `records` are the stored ones (path → record).
 */
export function supersede(
  committed: MachineCatalog | undefined,
  current: MachineCatalog,
  latest: Snapshot | undefined,
  records: ReadonlyMap<string, ChangeRecord | undefined>,
): Map<string, ChangeRecord> {
  const out = new Map<string, ChangeRecord>()
  if (!committed || !latest) return out
  const sinceSnapshot = new Map(diffCatalogs(latest.catalog, current).map((d) => [d.event, d]))
  for (const step of diffCatalogs(committed, current)) {
    const event = step.event
    const snapshotDigest = entryDigest(latest.catalog, event)
    // The committed state was the snapshot's: the change since the snapshot is this change.
    if (step.from === snapshotDigest) continue
    const path = recordPath(latest.version, event)
    const old = records.get(path)
    const superseded: Superseded[] = old?.superseded ?? []
    const now = expectedRecord(latest.version, event, sinceSnapshot.get(event), snapshotDigest, superseded)
    if (now && RANK[now.classification] >= RANK[step.classification]) continue
    if (superseded.some((s) => s.to === step.from)) continue
    const entry: Superseded = { to: step.from, classification: step.classification, changes: step.changes }
    const want = expectedRecord(latest.version, event, sinceSnapshot.get(event), snapshotDigest, [
      ...superseded,
      entry,
    ])!
    out.set(path, {
      ...want,
      // The record as stored keeps its `to` until redrafted: verify then asks for `--record`.
      ...(old ? { from: old.from, to: old.to, changes: old.changes } : {}),
      note: old?.note ?? PLACEHOLDER_NOTE,
    })
  }
  return out
}
