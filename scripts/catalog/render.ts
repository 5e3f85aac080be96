// Renders the catalog markdown (English and Chinese) and the generated known-event module.
import { displayType, type MachineCatalog } from './catalog-json.js'
import { type Lang, STRINGS } from './i18n.js'
import type { SourceModel } from './model.js'

const anchor = (digest: string) => `t-${digest.slice(0, 16)}`
const code = (s: string) => (s.includes('`') ? `\`\` ${s} \`\`` : `\`${s}\``)

/** Labels end with a colon: ASCII in English, full-width in Chinese. */
const labelled = (lang: Lang, label: string, text: string) =>
  lang === 'zh' ? `${label}：${text}` : `${label}: ${text}`

/** A fenced code block longer than any run of backticks inside it. */
export function fence(text: string, lang = 'ts'): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length))
  const ticks = '`'.repeat(longest + 1)
  return `${ticks}${lang}\n${text}\n${ticks}`
}

/** Display title of a resolved type entry. */
export function typeTitle(catalog: MachineCatalog, digest: string): string {
  return displayType(catalog.types, digest)
}

function link(catalog: MachineCatalog, digest: string, label?: string): string {
  return `[${code(label ?? typeTitle(catalog, digest))}](#${anchor(digest)})`
}

/** The catalog in one language. */
export function renderMarkdown(
  model: SourceModel,
  catalog: MachineCatalog,
  lang: Lang,
  /** Fresh Chinese descriptions by key (`event:<type>`, `type:<path#Name>`), for `zh`. */
  zhText: ReadonlyMap<string, string> = new Map(),
): string {
  const s = STRINGS[lang]
  const out: string[] = []
  const p = (line = '') => out.push(line)
  const translated = (key: string, hasEnglish: boolean) => {
    if (lang !== 'zh' || !hasEnglish) return
    const zh = zhText.get(key)
    p(zh !== undefined ? labelled(lang, '说明', zh) : '> 尚无中文说明（上方为英文原文）。')
    p()
  }
  const owners = new Set(model.events.map((e) => e.owner))
  const digests = Object.keys(catalog.types)
  p(`# ${s.title}`)
  p()
  p(s.switcher)
  p()
  p(s.generatedNote)
  p()
  for (const para of s.intro({
    formatVersion: model.formatVersion,
    events: model.events.length,
    packages: owners.size,
    types: digests.length,
  })) {
    p(para)
    p()
  }
  p(`## ${s.fingerprintsTitle}`)
  p()
  for (const para of s.fingerprints) {
    p(para)
    p()
  }

  p(`## ${s.envelopeTitle}`)
  p()
  p(s.envelopeIntro)
  p()
  for (const d of model.envelope) {
    p(`### ${code(d.name)}`)
    p()
    p(fence(d.text))
    p()
    p(labelled(lang, s.source, code(d.ref)))
    p()
  }
  if (catalog.header) {
    p(labelled(lang, s.header, link(catalog, catalog.header.digest)))
    p()
  }

  p(`## ${s.eventsTitle}`)
  p()
  p(s.eventsIntro)
  p()
  let ns = ''
  for (const e of model.events) {
    if (e.namespace !== ns) {
      ns = e.namespace
      p(`### ${s.namespaceTitle(ns)}`)
      p()
    }
    const digest = catalog.events[e.type]!.digest
    p(`#### ${code(e.type)} — ${e.surface ? 'surface' : 'log-only'}`)
    p()
    p(fence(e.declaration))
    p()
    translated(`event:${e.type}`, e.doc !== '')
    const refs = e.refs.map((r) => link(catalog, model.canonical.classes[r.classId]!.digest, r.name))
    if (refs.length > 0) {
      p(labelled(lang, s.types, refs.join(' · ')))
      p()
    }
    p(labelled(lang, s.payloadDigest, `[${code(digest)}](#${anchor(digest)})`))
    p()
    p(labelled(lang, s.owner, code(e.owner)))
    p()
    p(labelled(lang, s.source, code(e.ref)))
    p()
  }

  p(`## ${s.resolvedTitle}`)
  p()
  p(s.resolvedIntro)
  p()
  const entries = digests
    .map((d) => ({ d, title: typeTitle(catalog, d) }))
    .sort((a, b) => (a.title < b.title ? -1 : a.title > b.title ? 1 : a.d < b.d ? -1 : a.d > b.d ? 1 : 0))
  for (const { d, title } of entries) {
    const t = catalog.types[d]!
    p(`<a id="${anchor(d)}"></a>`)
    p()
    p(`### ${code(title)}`)
    p()
    p(`SHA-256: ${code(d)}`)
    p()
    if (t.names && t.names.length > 1) {
      p(labelled(lang, s.alsoNamed, t.names.slice(1).map(code).join(' · ')))
      p()
    }
    if (t.sources && t.sources.length > 0) {
      p(labelled(lang, s.source, t.sources.map(code).join(' · ')))
      p()
      // The declarations as written, JSDoc kept: editing a referenced type's documentation
      // changes the catalog, so it needs regenerating like any other change.
      for (const src of t.sources) {
        const text = model.typeDecls[src]
        if (text !== undefined) {
          p(fence(text))
          p()
          translated(`type:${src}`, model.typeDocs[src] !== undefined)
        }
      }
    }
    const f = t.form
    switch (f.k) {
      case 'union':
        p(s.oneOf)
        p()
        for (const m of [...f.of].sort((a, b) => {
          const ta = typeTitle(catalog, a)
          const tb = typeTitle(catalog, b)
          return ta < tb ? -1 : ta > tb ? 1 : a < b ? -1 : 1
        }))
          p(`- ${link(catalog, m)}`)
        p()
        break
      case 'array':
        p(s.arrayOf(link(catalog, f.of)))
        p()
        break
      case 'tuple':
        p(s.tupleOf)
        p()
        f.items.forEach((item, i) => {
          p(`${i + 1}. ${item.rest ? '...' : ''}${link(catalog, item.t)}${item.opt ? '?' : ''}`)
        })
        p()
        break
      case 'object': {
        const names = Object.keys(f.props).sort()
        if (names.length === 0 && f.index === undefined) {
          p(s.noProperties)
          p()
          break
        }
        if (names.length > 0) {
          p(s.properties)
          p()
          for (const n of names) {
            const prop = f.props[n]!
            p(`- ${code(`${n}${prop.opt ? '?' : ''}`)}: ${link(catalog, prop.t)}`)
          }
          p()
        }
        if (f.index !== undefined) {
          p(s.indexSig(link(catalog, f.index)))
          p()
        }
        break
      }
      case 'literal':
        p(s.literal(code(f.e !== undefined ? `${f.e} = ${JSON.stringify(f.v)}` : JSON.stringify(f.v))))
        p()
        break
      case 'template':
        p(s.primitive(f.text))
        p()
        break
      default:
        p(s.primitive(f.k))
        p()
    }
  }
  while (out.length > 0 && out[out.length - 1] === '') out.pop()
  return `${out.join('\n')}\n`
}

/** The generated `known-event-types.generated.ts` (shape fixed: the session imports it). */
export function renderKnownEventTypes(model: SourceModel): string {
  const lines = model.events.map(
    (e) => `  ${quote(e.type)}: { surface: ${e.surface}, owner: ${quote(e.owner)} },`,
  )
  return `// GENERATED by \`pnpm gen-persistence-catalog\` — do not edit by hand.
// The event types this build knows, their surface flag and owning package. A reader meeting
// a type that is neither registered nor listed here treats it as unknown.

/** What the build knows about one event type without loading its plugin. */
export interface KnownEventType {
  /** Whether events of this type are surface nodes (model messages). */
  readonly surface: boolean
  /** The npm package that declares the event. */
  readonly owner: string
}

/** Every event type declared in this repository, keyed by type. */
export const KNOWN_EVENT_TYPES: Readonly<Record<string, KnownEventType>> = Object.freeze({
${lines.join('\n')}
})
`
}

function quote(s: string): string {
  return `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`
}
