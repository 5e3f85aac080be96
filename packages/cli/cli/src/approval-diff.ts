import { readFile } from 'node:fs/promises'
import type { ApprovalQuestion } from '@keel/agent'
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

async function current(path: string | undefined): Promise<string | undefined> {
  if (path === undefined) return undefined
  try {
    return await readFile(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'EISDIR' || code === 'EACCES') return undefined
    throw error
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
 * When the file cannot be read or no longer holds `oldString`, the edit is shown as the
 * replaced text against its replacement. Undefined for any other tool.
 */
export async function proposedChange(question: ApprovalQuestion): Promise<ProposedChange | undefined> {
  const input = question.input as Record<string, unknown> | null
  if (input === null || typeof input !== 'object' || typeof input.path !== 'string') return undefined
  const absolute = question.info.facts.resolvedPaths?.[0]
  let before: string
  let after: string
  let creates = false
  if (question.toolName === 'edit_file') {
    if (typeof input.oldString !== 'string' || typeof input.newString !== 'string') return undefined
    const content = await current(absolute)
    const changed =
      content === undefined
        ? undefined
        : edited(content, input.oldString, input.newString, input.replaceAll === true)
    before = changed === undefined ? input.oldString : content!
    after = changed ?? input.newString
  } else if (question.toolName === 'write_file') {
    if (typeof input.content !== 'string') return undefined
    const content = await current(absolute)
    creates = content === undefined
    before = content ?? ''
    after = input.content
  } else return undefined
  const patch = structuredPatch(input.path, input.path, before, after, '', '', { context: 3 })
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
