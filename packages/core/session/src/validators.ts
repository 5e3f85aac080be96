// Runtime helpers of the generated validators (`src/events.generated.ts` of each package):
// the refinements zod has no built-in for.
import { canonicalJson } from '@keel/base'
import { z } from 'zod'

/** `@uniqueItems`: no two items are equal JSON values. */
export function uniqueItems(items: readonly unknown[]): boolean {
  return new Set(items.map(canonicalJson)).size === items.length
}

/** `@uniqueBy key`: no two items (objects) share the value of `key`. */
export function uniqueBy(items: readonly unknown[], key: string): boolean {
  const seen = new Set<string>()
  for (const item of items) {
    const v = canonicalJson((item as Record<string, unknown>)[key])
    if (seen.has(v)) return false
    seen.add(v)
  }
  return true
}

/** A tuple with a rest element before fixed ones (`[A, ...B[], C]`), which zod cannot express. */
export function tupleWithRest(
  before: readonly z.ZodType<unknown>[],
  rest: z.ZodType<unknown>,
  after: readonly z.ZodType<unknown>[],
): z.ZodType<unknown[]> {
  return z.array(z.unknown()).superRefine((items, ctx) => {
    if (items.length < before.length + after.length) {
      ctx.addIssue({ code: 'custom', message: `expected at least ${before.length + after.length} items` })
      return
    }
    const check = (schema: z.ZodType<unknown>, index: number) => {
      const r = schema.safeParse(items[index])
      if (!r.success)
        for (const i of r.error.issues) ctx.addIssue({ ...i, code: 'custom', path: [index, ...i.path] })
    }
    for (const [i, s] of before.entries()) check(s, i)
    for (let i = before.length; i < items.length - after.length; i++) check(rest, i)
    for (const [i, s] of after.entries()) check(s, items.length - after.length + i)
  })
}
