import { mkdir, stat, writeFile } from 'node:fs/promises'
import { dirname } from 'node:path'
import { defineTool, type Tool } from '@keel/tools'
import { z } from 'zod'
import { FsToolError, fsFailure, pathFacts, plural, resolvePath } from './common.js'

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
 * `write_file`: creates or overwrites a file with the given content, creating missing
 * parent directories, and reports the bytes written (and the previous size on overwrite).
 */
export function writeFileTool(): Tool<WriteFileInput> {
  return defineTool<WriteFileInput>({
    name: 'write_file',
    description:
      'Create a file or replace its entire content. Missing parent directories are created. ' +
      'For changing part of an existing file prefer edit_file; read a file before overwriting it.',
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
        previous = st.size
      } catch (error) {
        if (error instanceof FsToolError) throw error
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw fsFailure(error, input.path, absolute)
      }
      const bytes = Buffer.from(input.content, 'utf8')
      try {
        await mkdir(dirname(absolute), { recursive: true })
        await writeFile(absolute, bytes)
      } catch (error) {
        throw fsFailure(error, input.path, absolute)
      }
      const lines =
        input.content === '' ? 0 : input.content.split('\n').length - (input.content.endsWith('\n') ? 1 : 0)
      return previous === undefined
        ? `Created ${input.path}: wrote ${plural(bytes.length, 'byte')} (${plural(lines, 'line')}).`
        : `Overwrote ${input.path}: wrote ${plural(bytes.length, 'byte')} (${plural(lines, 'line')}); it held ${plural(previous, 'byte')} before.`
    },
  })
}
