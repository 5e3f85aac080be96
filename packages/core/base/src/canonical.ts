import { hash } from 'node:crypto'

/**
 * Canonical JSON text of a value: object keys sorted (by UTF-16 code units), no whitespace,
 * `undefined` properties left out and `undefined` elsewhere written as `null`, as
 * `JSON.stringify` does. Equal JSON values give equal texts, so it serves for comparing
 * values, for uniqueness checks and as the input of a digest.
 */
export function canonicalJson(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value ?? null)
  if (Array.isArray(value)) {
    let out = '['
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i])
    return `${out}]`
  }
  const record = value as Record<string, unknown>
  // The default sort compares UTF-16 code units.
  const keys = Object.keys(record).sort()
  let out = '{'
  for (const key of keys) {
    const item = record[key]
    if (item === undefined) continue
    out += `${out.length === 1 ? '' : ','}${JSON.stringify(key)}:${canonicalJson(item)}`
  }
  return `${out}}`
}

/** `sha256:<hex>` of a value's {@link canonicalJson}: equal JSON values get equal digests. */
export function canonicalDigest(value: unknown): string {
  return `sha256:${hash('sha256', canonicalJson(value), 'hex')}`
}
