import type { ApprovalQuestion } from '@keel/agent'
import { type BoundedRead, errorMessage, readBoundedText } from '@keel/base'
import { structuredPatch } from 'diff'

/** One line of a unified diff as shown. */
export interface DiffLine {
  readonly kind: 'add' | 'del' | 'context' | 'hunk' | 'note'
  readonly text: string
}

/** The change an `edit_file` / `write_file` call would make, as a unified diff. */
export interface ProposedChange {
  /** The path as the model wrote it. */
  readonly path: string
  readonly lines: readonly DiffLine[]
  readonly added: number
  readonly removed: number
  /** The file does not exist yet (`write_file` creates it). */
  readonly creates: boolean
}

/** Largest file shown as a diff at an approval: a bigger one is named with its size, not read. */
export const MAX_DIFF_FILE_BYTES = 2 * 1024 * 1024

/**
 * Most lines (added plus removed) a diff shown at an approval may change: the diff's cost
 * grows with their square, and it runs on the thread that draws the terminal (a full rewrite
 * of 5,000 lines took 19.5 s here without a bound, 0.5 s with this one).
 */
const MAX_DIFF_EDIT_LINES = 1_000

/**
 * The file a call would change, as it is now: its text, `undefined` when there is none yet,
 * or why no diff is shown (a string). Only a regular file is read — the path comes from the
 * model, and a FIFO would stall the question, a link to a device fill the memory — and only
 * up to {@link MAX_DIFF_FILE_BYTES}.
 */
function current(shown: string, path: string | undefined): string | { text: string } | undefined {
  if (path === undefined) return undefined
  let read: BoundedRead
  try {
    read = readBoundedText(path, MAX_DIFF_FILE_BYTES)
  } catch (error) {
    return `no diff: ${shown} cannot be read (${errorMessage(error)})`
  }
  switch (read.kind) {
    case 'text':
      return { text: read.text }
    case 'missing':
      return undefined
    case 'not-a-file':
      return `no diff: ${shown} is ${read.what}, not a regular file`
    case 'too-large':
      return `no diff: ${shown} is ${read.bytes.toLocaleString('en-US')} bytes, over the ${read.limit.toLocaleString('en-US')} shown as a diff`
  }
}

/** What the file would hold after an `edit_file` (undefined when `oldString` is not in it). */
function edited(content: string, oldString: string, newString: string, all: boolean): string | undefined {
  if (oldString === '' || !content.includes(oldString)) return undefined
  return all ? content.split(oldString).join(newString) : content.replace(oldString, () => newString)
}

/**
 * The diff a person approving an `edit_file` or `write_file` call should see: the file as it
 * is against what the call would leave (3 lines of context), read when the question is put.
 * When the file does not exist or no longer holds `oldString`, the edit is shown as the
 * replaced text against its replacement. A string says why no diff is shown: the path is not
 * a regular file, the file is over {@link MAX_DIFF_FILE_BYTES}, or more than
 * {@link MAX_DIFF_EDIT_LINES} lines change. Undefined for any other tool.
 */
export async function proposedChange(
  question: ApprovalQuestion,
): Promise<ProposedChange | string | undefined> {
  const input = question.input as Record<string, unknown> | null
  if (input === null || typeof input !== 'object' || typeof input.path !== 'string') return undefined
  const absolute = question.info.facts.resolvedPaths?.[0]
  let before: string
  let after: string
  let creates = false
  if (question.toolName === 'edit_file') {
    if (typeof input.oldString !== 'string' || typeof input.newString !== 'string') return undefined
    const content = current(input.path, absolute)
    if (typeof content === 'string') return content
    const changed =
      content === undefined
        ? undefined
        : edited(content.text, input.oldString, input.newString, input.replaceAll === true)
    before = changed === undefined ? input.oldString : content!.text
    after = changed ?? input.newString
  } else if (question.toolName === 'write_file') {
    if (typeof input.content !== 'string') return undefined
    const content = current(input.path, absolute)
    if (typeof content === 'string') return content
    creates = content === undefined
    before = content?.text ?? ''
    after = input.content
  } else return undefined
  const patch = structuredPatch(input.path, input.path, before, after, '', '', {
    context: 3,
    maxEditLength: MAX_DIFF_EDIT_LINES,
  })
  if (patch === undefined)
    return `no diff: more than ${MAX_DIFF_EDIT_LINES.toLocaleString('en-US')} lines of ${input.path} change`
  const lines: DiffLine[] = []
  let added = 0
  let removed = 0
  for (const hunk of patch.hunks) {
    lines.push({
      kind: 'hunk',
      text: `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`,
    })
    for (const line of hunk.lines) {
      const mark = line[0]
      if (mark === '+') added++
      if (mark === '-') removed++
      lines.push({
        kind: mark === '+' ? 'add' : mark === '-' ? 'del' : mark === '\\' ? 'note' : 'context',
        text: line,
      })
    }
  }
  return { path: input.path, lines, added, removed, creates }
}

/** The summary line above a diff: `greet.mjs: +1 −1` (`(new file)` for a file to create). */
export function changeSummary(change: ProposedChange): string {
  return `${change.path}${change.creates ? ' (new file)' : ''}: +${change.added} −${change.removed}`
}
