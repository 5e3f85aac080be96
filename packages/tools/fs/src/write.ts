import { stat } from 'node:fs/promises'
import { dirname } from 'node:path'
import { defineTool, type Tool } from '@keel/tools'
import { z } from 'zod'
import { makeParents, writeFileAtomic } from './atomic.js'
import { checkAborted, FsToolError, fsFailure, plural, resolvePath } from './common.js'
import { pathFacts } from './paths.js'
import { assertFresh } from './read-state.js'

/** Options of {@link writeFileTool}. */
export interface WriteFileOptions {
  /**
   * Refuse to overwrite an existing file the model has not read in this session
   * (`FILE_NOT_READ`) or that changed on disk since (`FILE_CHANGED_SINCE_READ`). Default true.
   */
  requireRead?: boolean
}

const writeFileInput = z.strictObject({
  path: z
    .string()
    .min(1)
    .describe('Path of the file to write, absolute or relative to the working directory.'),
  content: z
    .string()
    .describe('The complete new content of the file (UTF-8). Replaces whatever the file held.'),
})

/** Input of `write_file`. */
export type WriteFileInput = z.infer<typeof writeFileInput>

/**
 * `write_file`: creates or overwrites a file with the given content (UTF-8), creating missing
 * parent directories one by one (abortable), writing atomically (temporary file + rename,
 * permission bits kept), and reports the bytes written (and the previous size on overwrite).
 * An existing file must have been read in this session and be unchanged since.
 */
export function writeFileTool(options: WriteFileOptions = {}): Tool<WriteFileInput> {
  const requireRead = options.requireRead ?? true
  return defineTool<WriteFileInput>({
    name: 'write_file',
    description:
      'Create a file or replace its entire content. Missing parent directories are created. ' +
      'For changing part of an existing file prefer edit_file; an existing file must be read (read_file) before it is overwritten.',
    inputSchema: writeFileInput,
    annotations: { readOnly: false, destructive: true, openWorld: false, idempotent: true },
    isConcurrencySafe: false,
    facts: (input, cwd) => pathFacts(cwd, input.path),
    async call(input, ctx) {
      const absolute = resolvePath(ctx.cwd, input.path)
      let previous: number | undefined
      try {
        const st = await stat(absolute)
        if (!st.isFile()) {
          throw new FsToolError(
            'NOT_A_FILE',
            `${input.path} is ${st.isDirectory() ? 'a directory' : 'not a regular file'}; choose a file path`,
            { path: input.path, resolvedPath: absolute },
          )
        }
        if (requireRead) assertFresh(ctx, input.path, absolute, st)
        previous = st.size
      } catch (error) {
        if (error instanceof FsToolError) throw error
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw fsFailure(error, input.path, absolute)
      }
      checkAborted(ctx.signal)
      const bytes = Buffer.from(input.content, 'utf8')
      await makeParents(input.path, dirname(absolute), ctx.signal)
      await writeFileAtomic(input.path, absolute, bytes, ctx.signal)
      const lines =
        input.content === '' ? 0 : input.content.split('\n').length - (input.content.endsWith('\n') ? 1 : 0)
      return previous === undefined
        ? `Created ${input.path}: wrote ${plural(bytes.length, 'byte')} (${plural(lines, 'line')}).`
        : `Overwrote ${input.path}: wrote ${plural(bytes.length, 'byte')} (${plural(lines, 'line')}); it held ${plural(previous, 'byte')} before.`
    },
  })
}
