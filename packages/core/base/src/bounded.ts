/**
 * Bounded text for error messages. Anything an error echoes back — a key, a value, a path,
 * a validator's message, a list of issues — comes from input Keel does not control (a
 * model's arguments, a stored line, a header) and may be megabytes long. These helpers are
 * the one place that bounds it: long strings keep their head and tail around a marker
 * saying how much was left out, so the message still names what and where.
 */

/** Longest key (of an object, or in a JSON path) shown whole in an error text. */
export const MAX_ERROR_KEY_CHARS = 64

/** Longest single value (a string, a validator's message) shown whole in an error text. */
export const MAX_ERROR_VALUE_CHARS = 240

/** How many validation issues an error text lists before saying how many more there are. */
export const MAX_ERROR_ISSUES = 10

/** Longest whole error text built by {@link boundText}'s callers (a list of issues, a message). */
export const MAX_ERROR_TEXT_CHARS = 4_000

const isHigh = (code: number): boolean => code >= 0xd800 && code <= 0xdbff
const isLow = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff

/**
 * `text` itself when it has at most `max` characters (UTF-16 code units); otherwise its
 * head and tail around `…[N characters elided]…`, the whole at most about `max` plus the
 * marker. Never splits a surrogate pair.
 */
export function elide(text: string, max: number = MAX_ERROR_VALUE_CHARS): string {
  if (text.length <= max) return text
  const keep = Math.max(2, max)
  let head = Math.ceil(keep * 0.6)
  let tailStart = text.length - (keep - head)
  if (head > 0 && isHigh(text.charCodeAt(head - 1))) head--
  if (tailStart < text.length && isLow(text.charCodeAt(tailStart))) tailStart++
  const elided = tailStart - head
  return `${text.slice(0, head)}…[${elided.toLocaleString('en-US')} characters elided]…${text.slice(tailStart)}`
}

/** A whole error text, bounded to {@link MAX_ERROR_TEXT_CHARS} (or `max`) by {@link elide}. */
export function boundText(text: string, max: number = MAX_ERROR_TEXT_CHARS): string {
  return elide(text, max)
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/u

/**
 * A JSON path for messages: `root.key[2].other`, each key elided past
 * {@link MAX_ERROR_KEY_CHARS}. A key that is not an identifier is quoted (`$["my server"]`),
 * so a key holding a dot or a bracket cannot be mistaken for two. With an empty `root` the
 * path starts at its first key (`key[2]`); an empty path is `root`.
 */
export function formatJsonPath(path: ReadonlyArray<PropertyKey>, root = ''): string {
  let out = root
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`
    else {
      const raw = String(key)
      const name = elide(raw, MAX_ERROR_KEY_CHARS)
      if (!IDENTIFIER.test(raw)) out += `[${JSON.stringify(name)}]`
      else out += out === '' ? name : `.${name}`
    }
  }
  return out
}

/**
 * A one-line JSON preview of any value, at most about `max` characters: strings and keys
 * are elided past their limits, objects and arrays show their first entries then `…`, and
 * the value is never stringified whole (a megabyte value costs no more than a small one).
 * `undefined` is shown as such, other values that are not JSON (functions, bigints) by their kind.
 */
export function previewJson(value: unknown, max: number = MAX_ERROR_VALUE_CHARS): string {
  const out: string[] = []
  let used = 0
  const push = (s: string): boolean => {
    out.push(s)
    used += s.length
    return used < max
  }
  const visit = (v: unknown, depth: number): boolean => {
    if (typeof v === 'string') return push(JSON.stringify(elide(v, Math.min(MAX_ERROR_VALUE_CHARS, max))))
    if (v === null || v === undefined || typeof v === 'number' || typeof v === 'boolean')
      return push(String(v))
    if (typeof v !== 'object') return push(`<${typeof v}>`)
    if (depth >= 4) return push(Array.isArray(v) ? '[…]' : '{…}')
    if (Array.isArray(v)) {
      if (!push('[')) return false
      for (let i = 0; i < v.length; i++) {
        if (i > 0 && !push(',')) return false
        if (!visit(v[i], depth + 1)) return false
      }
      return push(']')
    }
    if (!push('{')) return false
    let first = true
    for (const key in v) {
      if (!first && !push(',')) return false
      first = false
      if (!push(`${JSON.stringify(elide(key, MAX_ERROR_KEY_CHARS))}:`)) return false
      if (!visit((v as Record<string, unknown>)[key], depth + 1)) return false
    }
    return push('}')
  }
  const complete = visit(value, 0)
  const text = out.join('')
  return complete && text.length <= max ? text : `${elide(text, max)}…`
}

/** The parts of a validation issue (a zod issue, structurally) an error text shows. */
export interface IssueLike {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
  readonly code?: string
  /** `unrecognized_keys`: the keys; each is elided rather than echoed whole. */
  readonly keys?: readonly string[]
}

/** One issue as bounded text: its path (from `root`) and its message. */
export interface BoundedIssue {
  path: string
  message: string
}

/**
 * Validation issues as bounded text, at most {@link MAX_ERROR_ISSUES} of them, plus how
 * many were left out. A message is elided past {@link MAX_ERROR_VALUE_CHARS}; an
 * unrecognized-keys message is rebuilt from its keys, each elided, so a megabyte key costs
 * a few dozen characters.
 */
export function boundIssues(
  issues: readonly IssueLike[],
  root = '',
): { issues: BoundedIssue[]; more: number } {
  const shown = issues.slice(0, MAX_ERROR_ISSUES).map((issue) => ({
    path: formatJsonPath(issue.path, root),
    message: issueMessage(issue),
  }))
  return { issues: shown, more: Math.max(0, issues.length - shown.length) }
}

function issueMessage(issue: IssueLike): string {
  if (issue.code === 'unrecognized_keys' && issue.keys !== undefined && issue.keys.length > 0) {
    const keys = issue.keys
      .slice(0, MAX_ERROR_ISSUES)
      .map((k) => JSON.stringify(elide(k, MAX_ERROR_KEY_CHARS)))
    const rest = issue.keys.length - keys.length
    return `Unrecognized key${issue.keys.length === 1 ? '' : 's'}: ${keys.join(', ')}${rest > 0 ? ` (and ${rest} more)` : ''}`
  }
  return elide(issue.message)
}
