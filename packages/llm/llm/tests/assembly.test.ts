import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MessageAssembly } from '../src/index.js'

type Delta =
  | { kind: 'text'; text: string }
  | { kind: 'reasoning'; text: string }
  | { kind: 'tool'; index: number; args: string }

const delta: fc.Arbitrary<Delta> = fc.oneof(
  fc.record({ kind: fc.constant('text' as const), text: fc.string({ maxLength: 5 }) }),
  fc.record({ kind: fc.constant('reasoning' as const), text: fc.string({ maxLength: 5 }) }),
  fc.record({
    kind: fc.constant('tool' as const),
    index: fc.integer({ min: 0, max: 3 }),
    args: fc.string({ maxLength: 4 }),
  }),
)

describe('MessageAssembly.partial (the delivered prefix of an interrupted stream)', () => {
  it('keeps every text and reasoning character in order, merges runs, and keeps only superseded tool calls', () => {
    fc.assert(
      fc.property(fc.array(delta, { maxLength: 30 }), (deltas) => {
        // providers stream tool calls by increasing index; model that order
        let highest = -1
        const ordered = deltas.filter((d) => {
          if (d.kind !== 'tool') return true
          if (d.index < highest) return false
          highest = d.index
          return true
        })
        const partial = new MessageAssembly()
        const args = new Map<number, string>()
        for (const d of ordered) {
          if (d.kind === 'text') partial.accept({ type: 'text-delta', text: d.text })
          else if (d.kind === 'reasoning') partial.accept({ type: 'reasoning-delta', text: d.text })
          else {
            const first = !args.has(d.index)
            args.set(d.index, (args.get(d.index) ?? '') + d.args)
            partial.accept({
              type: 'tool-call-delta',
              index: d.index,
              ...(first ? { id: `id${d.index}`, name: 'tool' } : {}),
              argumentsDelta: d.args,
            })
          }
        }
        const { content } = partial.partial()
        const textOf = (kind: 'text' | 'reasoning') =>
          content.flatMap((b) => (b.type === kind ? [b.text] : [])).join('')
        expect(textOf('text')).toBe(ordered.flatMap((d) => (d.kind === 'text' ? [d.text] : [])).join(''))
        expect(textOf('reasoning')).toBe(
          ordered.flatMap((d) => (d.kind === 'reasoning' ? [d.text] : [])).join(''),
        )
        // no empty blocks, no two adjacent blocks of the same text kind
        for (let i = 0; i < content.length; i++) {
          const b = content[i]!
          if (b.type !== 'tool-call') expect(b.text).not.toBe('')
          const next = content[i + 1]
          if (next && b.type !== 'tool-call') expect(next.type).not.toBe(b.type)
        }
        const calls = content.flatMap((b) => (b.type === 'tool-call' ? [b] : []))
        const expected = [...args.keys()].filter((i) => i < highest).sort((a, b) => a - b)
        expect(calls.map((c) => c.id)).toEqual(expected.map((i) => `id${i}`))
        for (const c of calls) expect(c.arguments).toBe(args.get(Number(c.id.slice(2))))
      }),
    )
  })
})
