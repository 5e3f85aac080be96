// Refinement tags: constraints written once as JSDoc tags on a declaration (`@integer`,
// `@minimum 1`, `@pattern …`). They are part of the normalized type (digest, JSON Schema,
// generated validator) and verify classifies each change.
import { errorMessage } from '@keel/base'
import { ts } from 'ts-morph'
import type { NodeKind } from './graph.js'

/**
 * Refinements written once as JSDoc tags on a declaration (see REFINEMENT_TAGS). They are part
 * of the normalized structure: they enter the canonical form, the digest, the JSON Schema and
 * the generated validator.
 */
export interface Refinements {
  integer?: true
  minimum?: number
  maximum?: number
  exclusiveMinimum?: number
  exclusiveMaximum?: number
  minLength?: number
  maxLength?: number
  pattern?: string
  minItems?: number
  maxItems?: number
  uniqueItems?: true
  /** Array of objects: no two items share the value of this property (not JSON Schema; `x-uniqueBy`). */
  uniqueBy?: string
}

/** Every refinement tag, the value kind it takes, and the node kinds it applies to. */
export const REFINEMENT_TAGS: Readonly<
  Record<
    keyof Refinements,
    { value: 'none' | 'count' | 'number' | 'regex' | 'name'; kinds: readonly NodeKind[] }
  >
> = {
  integer: { value: 'none', kinds: ['number'] },
  minimum: { value: 'number', kinds: ['number'] },
  maximum: { value: 'number', kinds: ['number'] },
  exclusiveMinimum: { value: 'number', kinds: ['number'] },
  exclusiveMaximum: { value: 'number', kinds: ['number'] },
  minLength: { value: 'count', kinds: ['string', 'template'] },
  maxLength: { value: 'count', kinds: ['string', 'template'] },
  pattern: { value: 'regex', kinds: ['string', 'template'] },
  minItems: { value: 'count', kinds: ['array'] },
  maxItems: { value: 'count', kinds: ['array'] },
  uniqueItems: { value: 'none', kinds: ['array'] },
  uniqueBy: { value: 'name', kinds: ['array'] },
}

/** The refinement tags of a declaration's JSDoc (undefined when it has none). Problems go to `report`. */
export function refinementsOf(decl: ts.Node, report: (what: string) => void): Refinements | undefined {
  const out: Record<string, unknown> = {}
  for (const tag of ts.getJSDocTags(decl)) {
    const name = tag.tagName.text
    if (!Object.hasOwn(REFINEMENT_TAGS, name)) {
      const meant = misspeltRefinement(name)
      if (meant)
        report(`@${name} is not a refinement tag: did you mean @${meant}? (a misspelt tag would be ignored)`)
      continue
    }
    const spec = REFINEMENT_TAGS[name as keyof Refinements]
    const raw = (ts.getTextOfJSDocComment(tag.comment) ?? '').trim().replace(/^`(.*)`$/s, '$1')
    if (spec.value === 'none') {
      if (raw !== '') report(`@${name} takes no value (got "${raw}")`)
      out[name] = true
      continue
    }
    if (spec.value === 'regex') {
      try {
        new RegExp(raw, 'u')
        if (raw === '') throw new Error('empty')
        out[name] = raw
      } catch (e) {
        report(`@pattern ${JSON.stringify(raw)} is not a valid regular expression (${errorMessage(e)})`)
      }
      continue
    }
    if (spec.value === 'name') {
      if (!/^[A-Za-z_$][\w$]*$/.test(raw)) report(`@${name} needs a property name (got "${raw}")`)
      else out[name] = raw
      continue
    }
    const n = Number(raw)
    if (raw === '' || !Number.isFinite(n) || (spec.value === 'count' && (!Number.isInteger(n) || n < 0))) {
      report(
        `@${name} needs ${spec.value === 'count' ? 'a non-negative integer' : 'a finite number'} (got "${raw}")`,
      )
      continue
    }
    out[name] = n
  }
  return Object.keys(out).length > 0 ? (out as Refinements) : undefined
}

/** Tags of JSDoc and TSDoc that are not refinements, however close their spelling. */
const OTHER_TAGS = new Set([
  'example',
  'default',
  'defaultValue',
  'deprecated',
  'see',
  'since',
  'remarks',
  'param',
  'returns',
  'throws',
  'internal',
  'link',
  'type',
  'template',
  'typedef',
  'inheritDoc',
  'privateRemarks',
  'readonly',
  'public',
  'private',
  'protected',
  'alpha',
  'beta',
  'experimental',
  'override',
  'virtual',
  'sealed',
  'packageDocumentation',
  'label',
  'event',
  'eventProperty',
  'typeParam',
  'author',
  'version',
  'todo',
  'summary',
  'description',
])

/** Edit distance (insert, delete, substitute, swap of neighbours) of two short strings. */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [
    i,
    ...new Array<number>(b.length).fill(0),
  ])
  for (let j = 1; j <= b.length; j++) d[0]![j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        v = Math.min(v, d[i - 2]![j - 2]! + 1)
      d[i]![j] = v
    }
  }
  return d[a.length]![b.length]!
}

/** The refinement tag a non-refinement tag was probably meant to be (`minLenght` → `minLength`). */
export function misspeltRefinement(tag: string): string | undefined {
  if (OTHER_TAGS.has(tag)) return undefined
  let best: string | undefined
  let bestDistance = Number.POSITIVE_INFINITY
  for (const name of Object.keys(REFINEMENT_TAGS)) {
    const d = name.toLowerCase() === tag.toLowerCase() ? 0 : distance(name.toLowerCase(), tag.toLowerCase())
    if (d < bestDistance) {
      best = name
      bestDistance = d
    }
  }
  return bestDistance <= (best!.length >= 8 ? 2 : 1) ? best : undefined
}

export function refineKey(r: Refinements | undefined): string {
  if (!r) return ''
  return JSON.stringify(
    Object.keys(r)
      .sort()
      .map((k) => [k, r[k as keyof Refinements]]),
  )
}
