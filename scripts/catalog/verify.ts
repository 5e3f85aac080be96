// `pnpm verify-persistence-catalog`: regenerate in memory, compare byte for byte, explain.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { MachineCatalog } from './catalog-json.js'
import { diffCatalogs } from './diff.js'
import { sha256 } from './digest.js'
import { CatalogError } from './errors.js'
import {
  CATALOG_EN,
  CATALOG_I18N,
  CATALOG_JSON,
  CATALOG_ZH,
  generateCatalog,
  type HistoryOptions,
  historyOf,
} from './generate.js'
import { TRANSLATIONS_ZH } from './translations.js'
import type { LoadedProject } from './workspace.js'

export interface VerifyOptions {
  root: string
  sessionModule?: string
  loaded?: LoadedProject
  /** The code that runs, already asked (see `startRuntimeReport`); used when it covers what verify needs. */
  early?: HistoryOptions['early']
}

export interface VerifyResult {
  ok: boolean
  /** Human-readable lines: what differs, in words, and what to do. */
  messages: string[]
  /** Generated files whose committed content differs (or is missing). */
  staleFiles: string[]
  /** Semantic changes against the committed machine catalog. */
  semanticChanges: string[]
  /** Format-history problems (records, version, migrations, snapshots). */
  historyProblems: string[]
  /** Stale or orphaned Chinese translations. */
  translationProblems: string[]
}

/** A short view of the changed region of two texts. */
export function textDiff(before: string, after: string, max = 12): string[] {
  const a = before.split('\n')
  const b = after.split('\n')
  let start = 0
  while (start < a.length && start < b.length && a[start] === b[start]) start++
  let endA = a.length - 1
  let endB = b.length - 1
  while (endA >= start && endB >= start && a[endA] === b[endB]) {
    endA--
    endB--
  }
  const out: string[] = [`@@ line ${start + 1} @@`]
  for (const l of a.slice(start, endA + 1).slice(0, max)) out.push(`- ${l}`)
  if (endA + 1 - start > max) out.push(`- … (${endA + 1 - start - max} more lines)`)
  for (const l of b.slice(start, endB + 1).slice(0, max)) out.push(`+ ${l}`)
  if (endB + 1 - start > max) out.push(`+ … (${endB + 1 - start - max} more lines)`)
  return out
}

/** Verifies the committed catalog files against the sources. Never writes. */
export function verifyCatalog(options: VerifyOptions): VerifyResult {
  const { root } = options
  const messages: string[] = []
  const result: VerifyResult = {
    ok: false,
    messages,
    staleFiles: [],
    semanticChanges: [],
    historyProblems: [],
    translationProblems: [],
  }
  let gen: ReturnType<typeof generateCatalog>
  try {
    gen = generateCatalog(options)
  } catch (e) {
    if (e instanceof CatalogError) {
      messages.push('The sources have problems; the catalog cannot be generated:')
      for (const p of e.problems) messages.push(`  ${p.message}`)
      return result
    }
    throw e
  }
  const disk = (rel: string) => {
    const abs = join(root, rel)
    return existsSync(abs) ? readFileSync(abs, 'utf8') : undefined
  }

  // Semantic summary against the committed machine catalog.
  const committedJson = disk(CATALOG_JSON)
  let digestsUnchanged = false
  if (committedJson !== undefined && committedJson !== gen.files[CATALOG_JSON]) {
    try {
      const old = JSON.parse(committedJson) as MachineCatalog
      const diffs = diffCatalogs(old, gen.catalog)
      digestsUnchanged = diffs.length === 0
      // Each changed path carries its own class, not the entry's worst.
      for (const d of diffs) {
        const each = d.classified ?? d.changes.map((text) => ({ text, severity: d.classification }))
        for (const c of each) result.semanticChanges.push(`${c.text}  [${c.severity}]`)
      }
    } catch {
      result.semanticChanges.push(`${CATALOG_JSON} is not valid JSON`)
    }
  } else if (committedJson !== undefined) {
    digestsUnchanged = true
  }

  for (const [rel, content] of Object.entries(gen.files)) {
    const old = disk(rel)
    if (old === content) continue
    result.staleFiles.push(rel)
  }
  if (result.staleFiles.length > 0) {
    messages.push('Generated files differ from the sources:')
    for (const rel of result.staleFiles) {
      const old = disk(rel)
      if (old === undefined) {
        messages.push(`  ${rel}: missing`)
        continue
      }
      messages.push(`  ${rel}: differs`)
      if ((rel === CATALOG_EN || rel === CATALOG_ZH) && old !== undefined) {
        const pairing = disk(CATALOG_I18N)
        try {
          const rec = pairing
            ? (JSON.parse(pairing) as { files?: Array<{ path: string; sha256: string }> })
            : undefined
          const entry = rec?.files?.find((f) => f.path === rel)
          if (entry && entry.sha256 !== sha256(old)) {
            messages.push(
              `    ${rel} no longer matches its digest in ${CATALOG_I18N}: it was edited by hand. The catalog is generated: change the JSDoc in the source or the prose in scripts/catalog/i18n.ts (both languages), then regenerate.`,
            )
          }
        } catch {
          // an unreadable pairing record is itself reported as a differing file
        }
        if (digestsUnchanged) {
          messages.push('    digests unchanged: documentation text only (JSDoc, comments, source lines)')
          for (const l of textDiff(old, gen.files[rel]!, 6)) messages.push(`      ${l}`)
        }
      }
    }
    if (result.semanticChanges.length > 0) {
      messages.push('Persisted types changed (against the committed docs/persistence-catalog.json):')
      for (const c of result.semanticChanges) messages.push(`  ${c}`)
    } else if (committedJson !== undefined && digestsUnchanged) {
      messages.push('No persisted type digest changed.')
    }
    messages.push('What to do: run `pnpm gen-persistence-catalog` and commit the regenerated files.')
  }

  const history = historyOf(root, gen, {
    loadGoldens: true,
    ...(options.early ? { early: options.early } : {}),
  })
  result.historyProblems = [
    ...new Set([...history.problems, ...(history.snapshotDue ? [history.snapshotDue] : [])]),
  ]
  if (result.historyProblems.length > 0) {
    messages.push('Format history:')
    for (const p of result.historyProblems) messages.push(`  ${p}`)
  }
  // Translations written from an English text that has changed since fail verify; missing
  // ones are only listed (the zh catalog marks them).
  const tr = gen.translations
  result.translationProblems = [
    ...tr.stale.map(
      (k) =>
        `${TRANSLATIONS_ZH}: the Chinese text of ${k} was written for an English description that has changed; update "zh" and set "source" to the new hash (pnpm gen-persistence-catalog prints it)`,
    ),
    ...tr.orphaned.map((k) => `${TRANSLATIONS_ZH}: ${k} no longer exists; delete its translation`),
  ]
  if (result.translationProblems.length > 0) {
    messages.push('Translations:')
    for (const p of result.translationProblems) messages.push(`  ${p}`)
  }
  if (tr.missing.length > 0)
    messages.push(`(${tr.missing.length} description(s) have no Chinese translation yet)`)
  result.ok =
    result.staleFiles.length === 0 &&
    result.historyProblems.length === 0 &&
    result.translationProblems.length === 0
  if (result.ok) {
    messages.push(
      `persistence catalog up to date: ${gen.model.events.length} events, ${Object.keys(gen.catalog.types).length} types, format version ${gen.model.formatVersion}`,
    )
  }
  return result
}
