import { errorMessage } from '@keel/base'
import { HookError } from './errors.js'

/** A compiled matcher: tests the value the event is matched on (tool name, source, trigger, …). */
export type Matcher = (value: string) => boolean

const everything: Matcher = () => true
/** Letters, digits, `_`, `-` and the separators `|`, `,` and space: an exact name list. */
const nameList = /^[A-Za-z0-9_|, -]+$/

/**
 * Compiles a matcher the way Claude Code reads it: absent, `""` and `"*"` match everything;
 * a plain name list (`Edit|Write`, `Edit, Write`) matches those exact names; anything else is
 * a JavaScript regular expression, unanchored and case-sensitive (`Edit.*` also hits
 * `NotebookEdit`). An invalid expression is a {@link HookError} `HOOK_MATCHER_INVALID`
 * naming `where` (file and JSON path).
 */
export function compileMatcher(pattern: string | undefined, where: { file: string; path: string }): Matcher {
  if (pattern === undefined || pattern === '' || pattern === '*') return everything
  if (nameList.test(pattern)) {
    const names = new Set(pattern.split(/[|, ]+/).filter((name) => name.length > 0))
    return (value) => names.has(value)
  }
  let regex: RegExp
  try {
    regex = new RegExp(pattern)
  } catch (error) {
    throw new HookError(
      'HOOK_MATCHER_INVALID',
      `${where.file}: ${where.path}: matcher ${JSON.stringify(pattern)} is not a valid regular expression (${errorMessage(
        error,
      )}); use a name list like "Edit|Write" or fix the expression`,
      { file: where.file, path: where.path, matcher: pattern },
    )
  }
  return (value) => regex.test(value)
}
