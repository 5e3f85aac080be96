// Chinese descriptions of events and types, kept in `docs/persistence/translations.zh.json`:
//   { "events": { "<type>": { "source": "<sha256 of the English JSDoc text>", "zh": "…" } },
//     "types": { "<path#Name>": { "source": "…", "zh": "…" } } }
// `source` records which English text a translation was written from: when the JSDoc changes,
// the translation is stale and verify fails until it is updated (and its `source` refreshed).
// A description without a translation is listed by gen and marked in the zh catalog.
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { sha256 } from './digest.js'
import type { SourceModel } from './model.js'

export const TRANSLATIONS_ZH = 'docs/persistence/translations.zh.json'

interface Entry {
  source: string
  zh: string
}

export interface Translations {
  events: Record<string, Entry>
  types: Record<string, Entry>
}

export interface TranslationStatus {
  /** Chinese text by description key (`event:<type>` or `type:<path#Name>`), fresh ones only. */
  text: Map<string, string>
  missing: string[]
  stale: string[]
  /** Translations of descriptions that no longer exist. */
  orphaned: string[]
}

export const sourceHash = (english: string) => sha256(english.trim())

export function readTranslations(root: string): Translations {
  const abs = join(root, TRANSLATIONS_ZH)
  if (!existsSync(abs)) return { events: {}, types: {} }
  const parsed = JSON.parse(readFileSync(abs, 'utf8')) as Partial<Translations>
  return { events: parsed.events ?? {}, types: parsed.types ?? {} }
}

/** Which descriptions have a fresh translation, which lack one, which are stale. */
export function translationStatus(root: string, model: SourceModel): TranslationStatus {
  const t = readTranslations(root)
  const out: TranslationStatus = { text: new Map(), missing: [], stale: [], orphaned: [] }
  const check = (key: string, english: string, entry: Entry | undefined) => {
    if (english === '') return
    if (!entry) out.missing.push(key)
    else if (entry.source !== sourceHash(english)) out.stale.push(key)
    else out.text.set(key, entry.zh)
  }
  for (const e of model.events) check(`event:${e.type}`, e.doc, t.events[e.type])
  for (const [ref, doc] of Object.entries(model.typeDocs)) check(`type:${ref}`, doc, t.types[ref])
  for (const k of Object.keys(t.events))
    if (!model.events.some((e) => e.type === k)) out.orphaned.push(`event:${k}`)
  for (const k of Object.keys(t.types)) if (!(k in model.typeDocs)) out.orphaned.push(`type:${k}`)
  return out
}

/** The source hash a translation of description `key` (`event:<type>`, `type:<path#Name>`) must record. */
export function sourceOf(model: SourceModel, key: string): string {
  const english = key.startsWith('event:')
    ? (model.events.find((e) => e.type === key.slice('event:'.length))?.doc ?? '')
    : (model.typeDocs[key.slice('type:'.length)] ?? '')
  return sourceHash(english)
}

/**
 * The description `what` names — an event type (`todo/write`), a type (`path#Name`), or a key
 * (`event:…`, `type:…`) — with the hash its translation must carry in `source`. Throws naming
 * what exists when nothing matches or the description is empty.
 */
export function translationHash(model: SourceModel, what: string): { key: string; hash: string } {
  const key =
    what.startsWith('event:') || what.startsWith('type:')
      ? what
      : what.includes('#')
        ? `type:${what}`
        : `event:${what}`
  const english = key.startsWith('event:')
    ? model.events.find((e) => e.type === key.slice('event:'.length))?.doc
    : model.typeDocs[key.slice('type:'.length)]
  if (english === undefined || english === '') {
    const near = [...model.events.map((e) => e.type), ...Object.keys(model.typeDocs)]
      .filter((k) => k.includes(what.replace(/^(event|type):/, '').split(/[/#]/)[0] ?? ''))
      .slice(0, 8)
    throw new Error(
      `no documented event or type ${JSON.stringify(what)} in the catalog${near.length > 0 ? `; did you mean ${near.join(', ')}?` : ''} (an event type such as todo/write, or a type as path#Name)`,
    )
  }
  return { key, hash: sourceHash(english) }
}
