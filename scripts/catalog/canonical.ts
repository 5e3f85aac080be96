// Canonical forms and digests of the structural classes (docs/guides/persistence-catalog.md,
// "Fingerprints").
// The canonical form of a class is a depth-first serialization of the quotient graph from
// that class: object members in name order, union members in a canonical order, and a
// `{ "$ref": i }` back-reference (i = first-visit index) for every composite class seen
// before. Union members are ordered by a depth-bounded structural hash whose depth is the
// number of classes reachable from the union — deep enough to tell every pair of distinct
// reachable classes apart (Moore's bound), and a function of the union's own structure
// only, so unrelated types never move it. Digest = SHA-256 of
// fast-json-stable-stringify(canonical form).
import stableStringify from 'fast-json-stable-stringify'
import { sha1, sha256 } from './digest.js'
import type { GNode, NodeKind } from './graph.js'
import type { SourceLoc } from './locations.js'
import { label, partition } from './partition.js'
import type { Refinements } from './refinements.js'

/** One structural equivalence class of the graph. */
export interface TypeClass {
  id: number
  kind: NodeKind
  /** One node of the class (all are structurally equal). */
  rep: GNode
  /** SHA-256 of the canonical form rooted at this class. */
  digest: string
  names: string[]
  sources: SourceLoc[]
}

/** A shallow, digest-referencing form of one class (what the machine catalog stores). */
export type ShallowForm =
  | { k: 'string' | 'number'; r?: Refinements }
  | { k: 'boolean' | 'null' | 'unknown' | 'never' }
  | { k: 'literal'; v: string | number | boolean; e?: string }
  | { k: 'template'; text: string; r?: Refinements }
  | { k: 'array'; of: string; r?: Refinements }
  | { k: 'tuple'; items: Array<{ t: string; opt?: true; rest?: true }> }
  | { k: 'object'; props: Record<string, { t: string; opt?: true }>; index?: string }
  | { k: 'union'; of: string[] }

export interface Canonical {
  /** Class id of each graph node. */
  classOf: number[]
  classes: TypeClass[]
  /** Children of each class, canonical order (unions already ordered). */
  children: number[][]
  /** Canonical JSON form rooted at a class (self-contained, with back-references). */
  formOf(classId: number): unknown
  shallow(classId: number): ShallowForm
}

/** Structural equivalence by partition refinement, then canonical forms and digests. */
export function canonicalize(allNodes: readonly GNode[]): Canonical {
  const { classOf: cls, redirect, kidsOf } = partition(allNodes)
  const classCount = Math.max(-1, ...cls) + 1
  const reps: GNode[] = new Array(classCount)
  const names: Array<Set<string>> = Array.from({ length: classCount }, () => new Set())
  const sources: Array<Set<string>> = Array.from({ length: classCount }, () => new Set())
  for (const n of allNodes) {
    const c = cls[n.id]!
    if (!reps[c] && redirect(n.id) === n.id) reps[c] = n
    for (const x of n.names) names[c]!.add(x)
    for (const x of n.sources) sources[c]!.add(x)
  }
  const rawKids: number[][] = reps.map((r) => {
    const kids = kidsOf(r).map((k) => cls[k]!)
    return r.kind === 'union' ? [...new Set(kids)] : kids
  })
  const labels = reps.map(label)

  // Depth-bounded structural keys, memoized per (depth, class): key_0 hashes the label,
  // key_d hashes the label and the children's key_(d-1) (unions as sorted sets). Computed with
  // an explicit stack: the depth can exceed what recursion allows on a deep type graph.
  const keyRows: string[][] = []
  const rowOf = (d: number) => {
    while (keyRows.length <= d) keyRows.push([])
    return keyRows[d]!
  }
  const keyAt = (d: number, c: number): string => {
    const stack: Array<[number, number]> = [[d, c]]
    while (stack.length > 0) {
      const [dd, cc] = stack[stack.length - 1]!
      const row = rowOf(dd)
      if (row[cc] !== undefined) {
        stack.pop()
        continue
      }
      if (dd === 0) {
        row[cc] = sha1(labels[cc]!)
        stack.pop()
        continue
      }
      const prev = rowOf(dd - 1)
      const missing = rawKids[cc]!.filter((x) => prev[x] === undefined)
      if (missing.length > 0) {
        for (const x of missing) stack.push([dd - 1, x])
        continue
      }
      const kids = rawKids[cc]!.map((x) => prev[x]!)
      row[cc] = sha1(
        `${labels[cc]}|${reps[cc]!.kind === 'union' ? [...new Set(kids)].sort().join(',') : kids.join(',')}`,
      )
      stack.pop()
    }
    return rowOf(d)[c]!
  }
  const reachCount = (c: number): number => {
    const seen = new Set<number>([c])
    const stack = [c]
    while (stack.length > 0) {
      for (const k of rawKids[stack.pop()!]!) {
        if (!seen.has(k)) {
          seen.add(k)
          stack.push(k)
        }
      }
    }
    return seen.size
  }
  // Union members are ordered by key_d at the smallest d where the members' keys are pairwise
  // distinct. That d is a function of the members' structure alone (unrelated types never move
  // it), and it exists: distinct classes among the n classes reachable from the union differ
  // at some depth below n (Moore's bound). In practice d is 0–2.
  const children: number[][] = rawKids.map((kids, c) => {
    if (reps[c]!.kind !== 'union') return kids
    const bound = kids.length > 1 ? reachCount(c) : 0
    for (let d = 0; ; d++) {
      const keys = new Map(kids.map((k) => [k, keyAt(d, k)]))
      if (new Set(keys.values()).size === kids.length || d >= bound) {
        return [...kids].sort((a, b) => {
          const ka = keys.get(a)!
          const kb = keys.get(b)!
          return ka < kb ? -1 : ka > kb ? 1 : a - b
        })
      }
    }
  })

  const formOf = (root: number): unknown => {
    const index = new Map<number, number>()
    const visit = (c: number): unknown => {
      const r = reps[c]!
      switch (r.kind) {
        case 'literal':
          return { k: 'literal', v: r.value, ...(r.enumMember !== undefined ? { e: r.enumMember } : {}) }
        case 'template':
          return { k: 'template', text: r.text, ...(r.refine ? { r: r.refine } : {}) }
        case 'string':
        case 'number':
          return { k: r.kind, ...(r.refine ? { r: r.refine } : {}) }
        case 'boolean':
        case 'null':
        case 'unknown':
        case 'never':
          return { k: r.kind }
      }
      const seen = index.get(c)
      if (seen !== undefined) return { $ref: seen }
      index.set(c, index.size)
      const kids = children[c]!
      switch (r.kind) {
        case 'array':
          return { k: 'array', of: visit(kids[0]!), ...(r.refine ? { r: r.refine } : {}) }
        case 'tuple':
          return {
            k: 'tuple',
            items: r.elements!.map((e, i) => ({
              t: visit(kids[i]!),
              ...(e.optional ? { opt: true } : {}),
              ...(e.rest ? { rest: true } : {}),
            })),
          }
        case 'object': {
          const props: Record<string, unknown> = {}
          r.props!.forEach((p, i) => {
            props[p.name] = { t: visit(kids[i]!), ...(p.optional ? { opt: true } : {}) }
          })
          const out: Record<string, unknown> = { k: 'object', props }
          if (r.index !== undefined) out.index = visit(kids[r.props!.length]!)
          return out
        }
        case 'union':
          return { k: 'union', of: kids.map(visit) }
      }
      throw new Error(`unreachable kind ${r.kind}`)
    }
    return visit(root)
  }

  const digests = reps.map((_, c) => sha256(stableStringify(formOf(c))))
  const classes: TypeClass[] = reps.map((rep, c) => ({
    id: c,
    kind: rep.kind,
    rep,
    digest: digests[c]!,
    names: [...names[c]!].sort(),
    sources: [...sources[c]!].sort(),
  }))

  const shallow = (c: number): ShallowForm => {
    const r = reps[c]!
    const kids = children[c]!
    switch (r.kind) {
      case 'literal':
        return { k: 'literal', v: r.value!, ...(r.enumMember !== undefined ? { e: r.enumMember } : {}) }
      case 'template':
        return { k: 'template', text: r.text!, ...(r.refine ? { r: r.refine } : {}) }
      case 'array':
        return { k: 'array', of: digests[kids[0]!]!, ...(r.refine ? { r: r.refine } : {}) }
      case 'string':
      case 'number':
        return { k: r.kind, ...(r.refine ? { r: r.refine } : {}) }
      case 'tuple':
        return {
          k: 'tuple',
          items: r.elements!.map((e, i) => ({
            t: digests[kids[i]!]!,
            ...(e.optional ? { opt: true as const } : {}),
            ...(e.rest ? { rest: true as const } : {}),
          })),
        }
      case 'object': {
        const props: Record<string, { t: string; opt?: true }> = {}
        r.props!.forEach((p, i) => {
          props[p.name] = { t: digests[kids[i]!]!, ...(p.optional ? { opt: true as const } : {}) }
        })
        return r.index !== undefined
          ? { k: 'object', props, index: digests[kids[r.props!.length]!]! }
          : { k: 'object', props }
      }
      case 'union':
        return { k: 'union', of: kids.map((k) => digests[k]!) }
      default:
        return { k: r.kind as 'boolean' }
    }
  }

  return { classOf: cls, classes, children, formOf, shallow }
}

/** The classes reachable from `roots` (the roots included). */
export function reachableFrom(canonical: Pick<Canonical, 'children'>, roots: readonly number[]): Set<number> {
  const reach = new Set<number>()
  const stack = [...roots]
  while (stack.length > 0) {
    const c = stack.pop()!
    if (reach.has(c)) continue
    reach.add(c)
    for (const k of canonical.children[c]!) stack.push(k)
  }
  return reach
}
