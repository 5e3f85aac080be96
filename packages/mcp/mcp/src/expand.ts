// Environment expansion in server entries, as Claude Code does it: `${VAR}` and
// `${VAR:-default}` in `command`, `args`, `env`, `url` and `headers`. An unset variable
// with no default is left as the literal text and reported, so a missing secret shows up
// as a clear warning instead of an empty header.

/** `${NAME}` or `${NAME:-default}`; the default runs to the first `}` (no nesting). */
const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]{0,127})(?::-([^}]{0,4096}))?\}/gu

/** The text with every reference replaced, and the names left unexpanded (unset, no default). */
export interface Expanded {
  readonly text: string
  readonly missing: readonly string[]
}

/**
 * Expands `${VAR}` and `${VAR:-default}` in `text` from `env`. `${VAR:-default}` uses the
 * default when VAR is unset or empty (as a POSIX shell does); `${VAR}` of an unset variable
 * stays as written and is listed in `missing`. One pass: an expanded value is not expanded
 * again.
 */
export function expandText(text: string, env: Readonly<Record<string, string | undefined>>): Expanded {
  const missing: string[] = []
  const out = text.replace(REFERENCE, (whole, name: string, fallback: string | undefined) => {
    const value = env[name]
    if (fallback !== undefined) return value === undefined || value === '' ? fallback : value
    if (value === undefined) {
      if (!missing.includes(name)) missing.push(name)
      return whole
    }
    return value
  })
  return { text: out, missing }
}

/** {@link expandText} over every value of a record (keys are never expanded). */
export function expandRecord(
  record: Readonly<Record<string, string>>,
  env: Readonly<Record<string, string | undefined>>,
  missing: string[],
): Record<string, string> {
  const out: Record<string, string> = {}
  for (const [key, value] of Object.entries(record)) {
    const expanded = expandText(value, env)
    for (const name of expanded.missing) if (!missing.includes(name)) missing.push(name)
    out[key] = expanded.text
  }
  return out
}
