// Runtime helpers of the generated validators (`src/events.generated.ts` of each package):
// the refinements zod has no built-in for.
import { canonicalJson } from '@keel/base'

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
