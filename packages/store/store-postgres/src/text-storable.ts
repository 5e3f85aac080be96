const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/**
 * Whether PostgreSQL's `text` type can hold `value` exactly: no NUL, no lone surrogate
 * (the client would send U+FFFD for it). Used for the `cwd` column, an index only; the
 * header keeps the exact value either way.
 */
export function textStorable(value: string): boolean {
  return !value.includes('\u0000') && !LONE_SURROGATE.test(value)
}
