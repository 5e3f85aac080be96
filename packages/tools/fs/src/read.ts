import { createReadStream } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { defineTool, type Tool } from '@keel/tools'
import { z } from 'zod'
import {
  assertTextFile,
  checkAborted,
  FsToolError,
  fsFailure,
  plural,
  resolvePath,
  statFile,
} from './common.js'
import { decodeText } from './encoding.js'
import { assertNoSymlinkEscape, pathFacts } from './paths.js'

/** Options of {@link readFileTool}. */
export interface ReadFileOptions {
  /** Lines returned when the model gives no `limit`. Default 2000. */
  defaultLimit?: number
  /** Characters one page may hold; a page stops early (and says where to continue) past it. Default 25,000. */
  maxPageChars?: number
  /** Longer lines are cut with a note. Default 2000. */
  maxLineChars?: number
  /**
   * Files up to this size are read whole: their encoding is detected (UTF-8, else Latin-1,
   * the same as edit_file) and the total line count is given. Larger files are streamed as
   * UTF-8 and the read stops after the page. Default 20 MB.
   */
  countLinesUpToBytes?: number
}

const readFileInput = z.strictObject({
  path: z
    .string()
    .min(1)
    .describe('Path of the file to read, absolute or relative to the working directory.'),
  offset: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe('1-based line number to start reading at. Default 1. Use it to continue a paginated read.'),
  limit: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      'Maximum number of lines to return. Default 2000. Long files are paginated; the output says where to continue.',
    ),
})

/** Input of `read_file`. */
export type ReadFileInput = z.infer<typeof readFileInput>

/**
 * `read_file`: a text file's lines with 1-based line numbers (`cat -n` style), from `offset`
 * for `limit` lines, paginated so one page stays under the result cap. Refuses binary
 * files (`FILE_BINARY`) and directories (`NOT_A_FILE`).
 */
export function readFileTool(options: ReadFileOptions = {}): Tool<ReadFileInput> {
  const defaultLimit = options.defaultLimit ?? 2000
  const maxPageChars = options.maxPageChars ?? 25_000
  const maxLineChars = options.maxLineChars ?? 2000
  const countUpTo = options.countLinesUpToBytes ?? 20 * 1024 * 1024
  return defineTool<ReadFileInput>({
    name: 'read_file',
    description:
      'Read a text file. Returns its lines prefixed with 1-based line numbers and a tab (the numbers are not part of the file). ' +
      `Reads up to ${defaultLimit} lines from offset; long files are paginated and the output tells you the offset to continue from. ` +
      'Binary files are refused. Read a file before editing it.',
    inputSchema: readFileInput,
    annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
    isConcurrencySafe: true,
    maxResultChars: maxPageChars + 5_000,
    facts: (input, cwd) => pathFacts(cwd, input.path),
    async call(input, ctx) {
      const absolute = resolvePath(ctx.cwd, input.path)
      await assertNoSymlinkEscape(ctx.cwd, input.path, absolute)
      const st = await statFile(input.path, absolute)
      if (st.size === 0) return `${input.path} is empty (0 bytes).`
      await assertTextFile(input.path, absolute, st.size)
      let whole: string[] | undefined
      if (st.size <= countUpTo) {
        let bytes: Buffer
        try {
          bytes = await readFile(absolute, { signal: ctx.signal })
        } catch (error) {
          if (error instanceof Error && error.name === 'AbortError') throw error
          throw fsFailure(error, input.path, absolute)
        }
        whole = decodeText(bytes, input.path).text.split(/\r?\n/)
        if (whole[whole.length - 1] === '') whole.pop()
      }
      const offset = input.offset ?? 1
      const limit = input.limit ?? defaultLimit
      const countAll = st.size <= countUpTo
      const out: string[] = []
      let chars = 0
      let lineNo = 0
      let lastShown = 0
      let stoppedForSize = false
      let broke = false
      const stream = whole === undefined ? createReadStream(absolute, { encoding: 'utf8' }) : undefined
      const reader =
        stream === undefined
          ? undefined
          : createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY })
      const lines: AsyncIterable<string> | Iterable<string> = reader ?? whole ?? []
      try {
        let done = false
        for await (const line of lines) {
          lineNo++
          if (lineNo % 1024 === 0) checkAborted(ctx.signal)
          if (lineNo < offset) continue
          if (!done) {
            if (lineNo >= offset + limit) done = true
            else {
              const shown =
                line.length > maxLineChars
                  ? `${line.slice(0, maxLineChars)}… [line truncated: ${line.length.toLocaleString('en-US')} characters]`
                  : line
              const rendered = `${String(lineNo).padStart(6)}\t${shown}`
              if (out.length > 0 && chars + rendered.length + 1 > maxPageChars) {
                done = true
                stoppedForSize = true
              } else {
                out.push(rendered)
                chars += rendered.length + 1
                lastShown = lineNo
              }
            }
          }
          if (done && !countAll) {
            broke = true
            break
          }
        }
      } catch (error) {
        if (error instanceof Error && error.name === 'AbortError') throw error
        throw fsFailure(error, input.path, absolute)
      } finally {
        reader?.close()
        stream?.destroy()
      }
      if (lastShown === 0) {
        if (broke) {
          throw new FsToolError('OFFSET_OUT_OF_RANGE', `offset ${offset} is past the end of ${input.path}`, {
            path: input.path,
            offset,
          })
        }
        throw new FsToolError(
          'OFFSET_OUT_OF_RANGE',
          `offset ${offset} is past the end of ${input.path}, which has ${plural(lineNo, 'line')}; use an offset from 1 to ${lineNo}`,
          { path: input.path, offset, totalLines: lineNo },
        )
      }
      const total = broke ? undefined : lineNo
      const complete = total !== undefined && offset === 1 && lastShown === total
      if (!complete) {
        const of = total !== undefined ? ` of ${total.toLocaleString('en-US')}` : ''
        const more = total === undefined || lastShown < total
        out.push(
          more
            ? `\n[Showing lines ${offset}–${lastShown}${of}${stoppedForSize ? ' (page size limit reached)' : ''}. Call read_file with offset ${lastShown + 1} to continue.]`
            : `\n[Showing lines ${offset}–${lastShown}${of}; this is the end of the file.]`,
        )
      }
      return out.join('\n')
    },
  })
}
