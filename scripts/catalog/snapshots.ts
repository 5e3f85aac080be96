// Format snapshots (`docs/persistence/formats/v<N>.json`): the catalog of a released format,
// sealed. The seal covers the catalog, the seal of the snapshot before it, the SHA-256 of the
// golden log written with it and the digest of the change records folded into it (those
// against the previous version): a hand edit of any of them is evident, and so is a re-sealed
// edit of one snapshot (its successor's `previousSeal` no longer matches).
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type MachineCatalog, stableJson } from './catalog-json.js'
import { sha256 } from './digest.js'
import { goldenPath } from './golden.js'
import { CHANGES_DIR } from './records.js'

export const FORMATS_DIR = 'docs/persistence/formats'

/** What a seal covers besides the catalog. */
export interface SealParts {
  /** The seal of the snapshot before it; null for the first. */
  previousSeal: string | null
  /** SHA-256 of the golden log of this version. */
  golden: string | null
  /** Digest of the change records against the previous version (null for the first snapshot). */
  folded: string | null
}

export interface Snapshot extends Partial<SealParts> {
  version: number
  path: string
  catalog: MachineCatalog
  seal?: string
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
      const { seal, previousSeal, golden, folded, ...catalog } = JSON.parse(text) as MachineCatalog &
        Partial<SealParts> & { seal?: string }
      const parts = { previousSeal: previousSeal ?? null, golden: golden ?? null, folded: folded ?? null }
      return {
        version: Number(m[1]),
        path: `${FORMATS_DIR}/${m[0]}`,
        catalog: catalog as MachineCatalog,
        seal,
        ...parts,
        sealOk: seal !== undefined && seal === sealOf(catalog as MachineCatalog, parts),
      }
    })
    .sort((a, b) => a.version - b.version)
}

export function sealOf(catalog: MachineCatalog, parts: SealParts): string {
  return sha256(stableJson({ catalog, ...parts }))
}

/** The snapshot file of `catalog`, sealed. */
export function sealedSnapshot(catalog: MachineCatalog, parts: SealParts): string {
  return stableJson({ ...catalog, ...parts, seal: sealOf(catalog, parts) })
}

/** SHA-256 of a file under root, or null when it does not exist. */
export function fileDigest(root: string, rel: string): string | null {
  const abs = join(root, rel)
  return existsSync(abs) ? createHash('sha256').update(readFileSync(abs)).digest('hex') : null
}

/** Digest of the change records against `base`: their file names and contents. */
export function recordsDigest(root: string, base: number): string {
  const dir = join(root, CHANGES_DIR, `v${base}`)
  const files = existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .sort()
    : []
  return sha256(stableJson(files.map((f) => [f, fileDigest(root, `${CHANGES_DIR}/v${base}/${f}`)])))
}

/** What the seal of a new snapshot of `version` covers, from what is on disk now. */
export function sealPartsFor(root: string, version: number, previous: Snapshot | undefined): SealParts {
  return {
    previousSeal: previous?.seal ?? null,
    golden: fileDigest(root, goldenPath(version)),
    folded: previous ? recordsDigest(root, previous.version) : null,
  }
}

/**
 * Problems of the snapshot files themselves: a gap in the versions, a broken seal or chain, a
 * golden log or folded change records that differ from what the seal recorded.
 */
export function snapshotProblems(root: string, snapshots: readonly Snapshot[]): string[] {
  const out: string[] = []
  snapshots.forEach((s, i) => {
    const before = snapshots[i - 1]
    const expected = before ? before.version + 1 : 1
    if (s.version !== expected) {
      out.push(
        `${s.path}: format snapshots go 1, 2, 3, …; ${FORMATS_DIR}/v${expected}.json is missing (a released format snapshot was deleted: restore it from version control)`,
      )
    }
    if (!s.sealOk) {
      out.push(
        `${s.path} does not match its seal: a released format snapshot was edited by hand. Restore it from version control; to change the format, change the code and follow verify's instructions`,
      )
    }
    if (before && (s.previousSeal ?? null) !== (before.seal ?? null)) {
      out.push(
        `${s.path} does not chain to ${before.path} (previousSeal differs): one of them was replaced by hand`,
      )
    }
    const golden = fileDigest(root, goldenPath(s.version))
    if (golden === null) {
      out.push(
        `${goldenPath(s.version)} is missing: every format snapshot keeps the golden log written with it; restore it from version control`,
      )
    } else if (golden !== (s.golden ?? null)) {
      out.push(
        `${goldenPath(s.version)} differs from the golden log sealed into ${s.path}: golden logs are frozen when the snapshot is taken; restore it from version control`,
      )
    }
    if (before && recordsDigest(root, before.version) !== (s.folded ?? null)) {
      out.push(
        `the change records in ${CHANGES_DIR}/v${before.version}/ differ from those sealed into ${s.path}: records of a released format are history; restore them from version control`,
      )
    }
  })
  return out
}
