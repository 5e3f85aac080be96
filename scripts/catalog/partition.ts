// Structural equivalence classes of the normalized graph by partition refinement
// (bisimulation: two nodes are equivalent when their labels match and their children are
// pairwise equivalent, unions compared as sets). Because equivalence is computed over the
// graph and not by type-object identity, a recursive type gets the same class however it is
// entered (`a?: JsonValue`, `b: JsonValue` and `c: JsonValue[]` all reach one class).
import type { GNode } from './graph.js'
import { refineKey } from './refinements.js'

export function label(n: GNode): string {
  return n.refine ? `${baseLabel(n)}#${refineKey(n.refine)}` : baseLabel(n)
}

function baseLabel(n: GNode): string {
  switch (n.kind) {
    case 'literal':
      return `literal:${typeof n.value}:${JSON.stringify(n.value)}${n.enumMember !== undefined ? `:${n.enumMember}` : ''}`
    case 'template':
      return `template:${n.text}`
    case 'object':
      return `object:${JSON.stringify(n.props!.map((p) => [p.name, p.optional]))}:${n.index !== undefined}`
    case 'tuple':
      return `tuple:${JSON.stringify(n.elements!.map((e) => [e.optional, e.rest]))}`
    default:
      return n.kind
  }
}

function childList(n: GNode): number[] {
  switch (n.kind) {
    case 'array':
      return [n.element!]
    case 'tuple':
      return n.elements!.map((e) => e.child)
    case 'object':
      return n.index === undefined ? n.props!.map((p) => p.child) : [...n.props!.map((p) => p.child), n.index]
    case 'union':
      return n.members!
    default:
      return []
  }
}

export interface Partition {
  /** Class id of each graph node. */
  classOf: number[]
  /** A node's id, or the id of the member its collapsed union stands for. */
  redirect(id: number): number
  /** A node's children, redirected. */
  kidsOf(n: GNode): number[]
}

/** Partition refinement (Moore) over the whole graph, unions of one class collapsed onto a member. */
export function partition(allNodes: readonly GNode[]): Partition {
  // A union whose members collapsed to one (`Brand<string, 'A'> | string`, or two structurally
  // identical members `{ a: string } | { a: string }`) is that member.
  const collapsed = new Map<number, number>()
  const redirect = (id: number): number => {
    let n = allNodes[id]!
    for (let guard = 0; guard < 64; guard++) {
      const next = n.kind === 'union' && n.members!.length === 1 ? n.members![0]! : collapsed.get(n.id)
      if (next === undefined || next === n.id) break
      n = allNodes[next]!
    }
    return n.id
  }
  const kidsOf = (n: GNode) => childList(n).map(redirect)
  let nodes = allNodes.filter((n) => redirect(n.id) === n.id)
  // Partition refinement (Moore): start from labels, split by children's classes until stable.
  let cls = new Array<number>(allNodes.length)
  for (;;) {
    cls = new Array<number>(allNodes.length)
    const intern = new Map<string, number>()
    for (const n of nodes) {
      const l = label(n)
      let c = intern.get(l)
      if (c === undefined) {
        c = intern.size
        intern.set(l, c)
      }
      cls[n.id] = c
    }
    let count = intern.size
    for (;;) {
      const next = new Map<string, number>()
      const nc = new Array<number>(allNodes.length)
      for (const n of nodes) {
        const kids = kidsOf(n).map((k) => cls[k]!)
        const sig =
          n.kind === 'union'
            ? `${cls[n.id]}|${[...new Set(kids)].sort((a, b) => a - b).join(',')}`
            : `${cls[n.id]}|${kids.join(',')}`
        let c = next.get(sig)
        if (c === undefined) {
          c = next.size
          next.set(sig, c)
        }
        nc[n.id] = c
      }
      cls = nc
      if (next.size === count) break
      count = next.size
    }
    // Unions whose members all fell into one class collapse onto a member; then recompute.
    let more = false
    for (const n of nodes) {
      if (n.kind !== 'union') continue
      const kids = kidsOf(n).filter((k) => k !== n.id)
      if (kids.length > 0 && new Set(kids.map((k) => cls[k])).size === 1) {
        collapsed.set(n.id, kids[0]!)
        more = true
      }
    }
    if (!more) break
    nodes = allNodes.filter((n) => redirect(n.id) === n.id)
  }
  for (const n of allNodes) if (redirect(n.id) !== n.id) cls[n.id] = cls[redirect(n.id)]!
  return { classOf: cls, redirect, kidsOf }
}
