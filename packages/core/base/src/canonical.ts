import { createHash } from 'node:crypto'

/**
 * Canonical JSON text of a value: object keys sorted (by UTF-16 code units), no whitespace,
 * `undefined` properties left out and `undefined` elsewhere written as `null`, as
 * `JSON.stringify` does. Equal JSON values give equal texts, so it serves for comparing
 * values, for uniqueness checks and as the input of a digest.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`
  }
  return JSON.stringify(value ?? null)
}

/** `sha256:<hex>` of a value's {@link canonicalJson}: equal JSON values get equal digests. */
export function canonicalDigest(value: unknown): string {
  return `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}`
}
