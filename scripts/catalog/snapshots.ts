// Format snapshots (`docs/persistence/formats/v<N>.json`): sealed and chained, so a hand edit
// of a released format is evident.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type MachineCatalog, stableJson } from './catalog-json.js'
import { sha256 } from './digest.js'

export const FORMATS_DIR = 'docs/persistence/formats'

export interface Snapshot {
  version: number
  path: string
  catalog: MachineCatalog
  seal?: string
  previousSeal?: string | null
  /** The seal matches the content. */
  sealOk: boolean
}

export function readSnapshots(root: string): Snapshot[] {
  const dir = join(root, FORMATS_DIR)
  if (!existsSync(dir)) return []
  return readdirSync(dir)
    .map((f) => /^v(\d+)\.json$/.exec(f))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => {
      const text = readFileSync(join(dir, m[0]), 'utf8')
      const parsed = JSON.parse(text) as MachineCatalog & SnapshotSeal
      const { seal, previousSeal, ...catalog } = parsed
      return {
        version: Number(m[1]),
        path: `${FORMATS_DIR}/${m[0]}`,
        catalog: catalog as MachineCatalog,
        seal,
        previousSeal,
        sealOk: seal !== undefined && seal === sealOf(catalog as MachineCatalog, previousSeal ?? null),
      }
    })
    .sort((a, b) => a.version - b.version)
}

/**
 * What makes a snapshot tamper-evident: `seal` is the SHA-256 of the snapshot's catalog and
 * of `previousSeal`, the seal of the snapshot before it. A hand edit breaks the seal; a
 * re-sealed edit breaks the next snapshot's `previousSeal`.
 */
export interface SnapshotSeal {
  seal?: string
  previousSeal?: string | null
}

export function sealOf(catalog: MachineCatalog, previousSeal: string | null): string {
  return sha256(stableJson({ catalog, previousSeal }))
}

/** The snapshot file of `catalog`, sealed and chained to the previous snapshot. */
export function sealedSnapshot(catalog: MachineCatalog, previousSeal: string | null): string {
  return stableJson({ ...catalog, previousSeal, seal: sealOf(catalog, previousSeal) })
}

/** Problems of the snapshot files themselves: broken seals and chains. */
export function snapshotProblems(snapshots: readonly Snapshot[]): string[] {
  const out: string[] = []
  snapshots.forEach((s, i) => {
    if (!s.sealOk) {
      out.push(
        `${s.path} does not match its seal: a released format snapshot was edited by hand. Restore it from version control; to change the format, change the code and follow verify's instructions`,
      )
    }
    const before = snapshots[i - 1]
    if (before && (s.previousSeal ?? null) !== (before.seal ?? null)) {
      out.push(
        `${s.path} does not chain to ${before.path} (previousSeal differs): one of them was replaced by hand`,
      )
    }
  })
  return out
}
