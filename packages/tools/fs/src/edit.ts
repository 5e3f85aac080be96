import { readFile } from 'node:fs/promises'
import { defineTool, type Tool } from '@keel/tools'
import { z } from 'zod'
import { writeFileAtomic } from './atomic.js'
import { checkAborted, FsToolError, fsFailure, plural, resolvePath, statFile } from './common.js'
import { decodeText, encodeText } from './encoding.js'
import { pathFacts } from './paths.js'
import { assertFresh } from './read-state.js'

/** Options of {@link editFileTool}. */
export interface EditFileOptions {
  /** Files larger than this are refused with `FILE_TOO_LARGE`. Default 10 MB. */
  maxFileBytes?: number
  /**
   * Refuse to edit a file the model has not read in this session (`FILE_NOT_READ`) or that
   * changed on disk since (`FILE_CHANGED_SINCE_READ`). Default true.
   */
  requireRead?: boolean
}

const editFileInput = z.strictObject({
  path: z
    .string()
    .min(1)
    .describe('Path of the file to edit, absolute or relative to the working directory.'),
  oldString: z
    .string()
    .describe(
      'The exact text to replace, character for character, including indentation and line breaks (without read_file line numbers). ' +
        'It must occur exactly once unless replaceAll is true; include surrounding lines to make it unique.',
    ),
  newString: z.string().describe('The text to put in its place (must differ from oldString).'),
  replaceAll: z
    .boolean()
    .optional()
    .describe('Replace every occurrence instead of requiring exactly one. Default false.'),
})

/** Input of `edit_file`. */
export type EditFileInput = z.infer<typeof editFileInput>

function occurrences(haystack: string, needle: string): number[] {
  const found: number[] = []
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length))
    found.push(i)
  return found
}

function lineAt(text: string, index: number): number {
  let line = 1
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line++
  return line
}

function linesOf(text: string, positions: number[]): number[] {
  const lines: number[] = []
  let line = 1
  let cursor = 0
  for (const pos of positions) {
    for (let i = text.indexOf('\n', cursor); i !== -1 && i < pos; i = text.indexOf('\n', i + 1)) {
      line++
      cursor = i + 1
    }
    lines.push(line)
  }
  return lines
}

function snippet(text: string, fromLine: number, toLine: number): string {
  const lines = text.split('\n')
  const start = Math.max(1, fromLine - 2)
  const end = Math.min(lines.length, toLine + 2)
  const out: string[] = []
  for (let n = start; n <= end; n++) {
    const line = lines[n - 1] ?? ''
    out.push(`${String(n).padStart(6)}\t${line.length > 300 ? `${line.slice(0, 300)}…` : line}`)
  }
  return out.join('\n')
}

/**
 * `edit_file`: exact string replacement. `oldString` must occur exactly once
 * (`EDIT_NO_MATCH` when absent, `EDIT_AMBIGUOUS` with the count and line numbers when
 * repeated) unless `replaceAll`. A file with CRLF line endings matches an `oldString`
 * written with LF. Reports the changed lines with a few lines of context. UTF-8 files stay
 * UTF-8 (byte-order mark kept), other text is edited as Latin-1 so every byte outside the
 * edited range is kept; binary and UTF-16 files are refused. The write is atomic (temporary
 * file + rename, permission bits kept). The file must have been read in this session and be
 * unchanged on disk since (`FILE_NOT_READ`, `FILE_CHANGED_SINCE_READ`).
 */
export function editFileTool(options: EditFileOptions = {}): Tool<EditFileInput> {
  const maxBytes = options.maxFileBytes ?? 10 * 1024 * 1024
  const requireRead = options.requireRead ?? true
  return defineTool<EditFileInput>({
    name: 'edit_file',
    description:
      'Replace exact text in a file. oldString must match the file exactly (whitespace included) and occur exactly once, ' +
      'unless replaceAll is true. Read the file first; copy oldString from it without the line-number prefix. ' +
      'To create a file or rewrite it wholesale use write_file.',
    inputSchema: editFileInput,
    annotations: { readOnly: false, destructive: true, openWorld: false, idempotent: false },
    isConcurrencySafe: false,
    facts: (input, cwd) => pathFacts(cwd, input.path),
    async call(input, ctx) {
      const absolute = resolvePath(ctx.cwd, input.path)
      if (input.oldString === '') {
        throw new FsToolError(
          'EDIT_EMPTY_OLD_STRING',
          'oldString is empty; give the exact text to replace (use write_file to create a file or replace all of it)',
          { path: input.path },
        )
      }
      if (input.oldString === input.newString) {
        throw new FsToolError(
          'EDIT_NO_CHANGE',
          'oldString and newString are identical, so the edit would change nothing',
          {
            path: input.path,
          },
        )
      }
      const st = await statFile(input.path, absolute)
      if (st.size > maxBytes) {
        throw new FsToolError(
          'FILE_TOO_LARGE',
          `${input.path} is ${plural(st.size, 'byte')}, over the ${plural(maxBytes, 'byte')} edit_file handles; use bash (e.g. sed) for it`,
          { path: input.path, size: st.size, maxBytes },
        )
      }
      let bytes: Buffer
      try {
        bytes = await readFile(absolute, { signal: ctx.signal })
      } catch (error) {
        if (error instanceof Error && error.name === 'AbortError') throw error
        throw fsFailure(error, input.path, absolute)
      }
      const { text, encoding } = decodeText(bytes, input.path)
      if (requireRead) assertFresh(ctx, input.path, absolute, st)
      let oldString = input.oldString
      let newString = input.newString
      let found = occurrences(text, oldString)
      if (
        found.length === 0 &&
        text.includes('\r\n') &&
        oldString.includes('\n') &&
        !oldString.includes('\r')
      ) {
        oldString = oldString.replace(/\n/g, '\r\n')
        newString = newString.replace(/\r?\n/g, '\r\n')
        found = occurrences(text, oldString)
      }
      if (found.length === 0) {
        const hint =
          text.includes(input.oldString.trim()) && input.oldString.trim() !== ''
            ? ' The text occurs with different leading/trailing whitespace; copy it exactly.'
            : ' Read the file again (read_file) and copy the text exactly, including indentation.'
        throw new FsToolError('EDIT_NO_MATCH', `oldString does not occur in ${input.path}.${hint}`, {
          path: input.path,
        })
      }
      const lines = linesOf(text, found)
      if (found.length > 1 && input.replaceAll !== true) {
        const shown = lines.slice(0, 20).join(', ') + (lines.length > 20 ? ', …' : '')
        throw new FsToolError(
          'EDIT_AMBIGUOUS',
          `oldString occurs ${found.length} times in ${input.path} (lines ${shown}); include more surrounding text so it matches exactly once, or set replaceAll: true to replace all of them`,
          { path: input.path, count: found.length, lines },
        )
      }
      let updated = ''
      let cursor = 0
      for (const pos of found) {
        updated += text.slice(cursor, pos) + newString
        cursor = pos + oldString.length
      }
      updated += text.slice(cursor)
      const encoded = encodeText(updated, encoding, input.path)
      checkAborted(ctx.signal)
      await writeFileAtomic(input.path, absolute, encoded, ctx.signal)
      const kept = encoding === 'utf-8' ? '' : ` (kept as ${encoding})`
      if (found.length === 1) {
        const start = lineAt(updated, found[0]!)
        const end = start + (newString.match(/\n/g)?.length ?? 0)
        return `Edited ${input.path}${kept}: replaced 1 occurrence at line ${start}.\n${snippet(updated, start, end)}`
      }
      return `Edited ${input.path}${kept}: replaced ${found.length} occurrences (at original lines ${lines.slice(0, 20).join(', ')}${lines.length > 20 ? ', …' : ''}).`
    },
  })
}
