import type { Stats } from 'node:fs'
import { open, stat } from 'node:fs/promises'
import { isAbsolute, relative, resolve } from 'node:path'
import { errorMessage } from '@keel/base'
import { ToolError } from '@keel/tools'

/** The `errorCode`s the fs tools return. */
export type FsErrorCode =
  /** Nothing exists at the path. */
  | 'FILE_NOT_FOUND'
  /** The path exists but is not a regular file (a directory, a socket, …). */
  | 'NOT_A_FILE'
  /** The path (or one of its parents) exists but is not a directory. */
  | 'NOT_A_DIRECTORY'
  /** The file looks binary (contains NUL bytes); text tools refuse it. */
  | 'FILE_BINARY'
  /** The file is over the size the tool handles in memory. */
  | 'FILE_TOO_LARGE'
  /** The operating system refused access. */
  | 'PERMISSION_DENIED'
  /** `offset` is past the last line of the file. */
  | 'OFFSET_OUT_OF_RANGE'
  /** `oldString` does not occur in the file. */
  | 'EDIT_NO_MATCH'
  /** `oldString` occurs more than once and `replaceAll` is not set. */
  | 'EDIT_AMBIGUOUS'
  /** `oldString` and `newString` are the same. */
  | 'EDIT_NO_CHANGE'
  /** `oldString` is empty. */
  | 'EDIT_EMPTY_OLD_STRING'
  /** The grep pattern is not a valid JavaScript regular expression. */
  | 'GREP_INVALID_PATTERN'
  /** The search ran past `searchTimeoutMs` (a pattern with catastrophic backtracking, or a huge tree); it was stopped. */
  | 'GREP_TIMEOUT'
  /** A glob pattern (or grep's `glob`) has `..` after a wildcard, so no fixed directory bounds what it reaches. */
  | 'GLOB_PATTERN_ESCAPES'
  /** The path lies in the working directory but is a symbolic link leading out of it; use the target path. */
  | 'SYMLINK_ESCAPE'
  /** The file exists but was not read in this session; read it before editing or overwriting it. */
  | 'FILE_NOT_READ'
  /** The file changed on disk since it was last read in this session; read it again, then retry. */
  | 'FILE_CHANGED_SINCE_READ'
  /** The file is text in an encoding the tools do not edit (UTF-16/UTF-32 with a byte-order mark). */
  | 'FILE_ENCODING_UNSUPPORTED'
  /** The new text holds characters the file's encoding cannot store (e.g. `€` in a Latin-1 file). */
  | 'FILE_ENCODING_MISMATCH'
  /** Any other file-system failure (the message carries the system error). */
  | 'FS_ERROR'

/** Thrown by the fs tools; the runtime turns it into an error result with `errorCode = code`. */
export class FsToolError extends ToolError<FsErrorCode> {}

/** Resolves a path the model wrote against the agent's working directory. */
export function resolvePath(cwd: string, path: string): string {
  return resolve(cwd, path)
}

/** How a path is shown to the model: relative to `cwd` when inside it, absolute otherwise. */
export function displayPath(cwd: string, absolute: string): string {
  const rel = relative(cwd, absolute)
  if (rel === '') return '.'
  return rel.startsWith('..') || isAbsolute(rel) ? absolute : rel
}

/** Maps a Node file-system error to an {@link FsToolError} naming both paths. */
export function fsFailure(error: unknown, raw: string, absolute: string): FsToolError {
  const code = (error as NodeJS.ErrnoException)?.code
  const where = raw === absolute ? absolute : `${raw} (resolved to ${absolute})`
  const details = { path: raw, resolvedPath: absolute, systemCode: code }
  switch (code) {
    case 'ENOENT':
      return new FsToolError(
        'FILE_NOT_FOUND',
        `nothing exists at ${where}; check the path with list_dir or glob`,
        details,
      )
    case 'EACCES':
    case 'EPERM':
      return new FsToolError('PERMISSION_DENIED', `permission denied for ${where}`, details)
    case 'EISDIR':
      return new FsToolError(
        'NOT_A_FILE',
        `${where} is a directory, not a file; use list_dir to see its entries`,
        details,
      )
    case 'ENOTDIR':
      return new FsToolError('NOT_A_DIRECTORY', `a part of ${where} is a file, not a directory`, details)
    default:
      return new FsToolError('FS_ERROR', `file-system error at ${where}: ${errorMessage(error)}`, details)
  }
}

/** `stat` that throws {@link FsToolError}. */
export async function statPath(raw: string, absolute: string): Promise<Stats> {
  try {
    return await stat(absolute)
  } catch (error) {
    throw fsFailure(error, raw, absolute)
  }
}

/** Stats a path that must be a regular file. */
export async function statFile(raw: string, absolute: string): Promise<Stats> {
  const st = await statPath(raw, absolute)
  if (!st.isFile()) {
    const what = st.isDirectory() ? 'a directory' : 'not a regular file'
    throw new FsToolError(
      'NOT_A_FILE',
      `${raw} is ${what}${st.isDirectory() ? '; use list_dir to see its entries' : ''}`,
      { path: raw, resolvedPath: absolute },
    )
  }
  return st
}

/** Bytes sniffed for the binary check. */
export const SNIFF_BYTES = 8192

/** True when the buffer looks binary: it holds a NUL byte (the same rule git and grep use). */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.includes(0)
}

/** Throws `FILE_BINARY` when the start of the file looks binary. */
export async function assertTextFile(raw: string, absolute: string, size: number): Promise<void> {
  let handle: Awaited<ReturnType<typeof open>> | undefined
  try {
    handle = await open(absolute, 'r')
    const buf = Buffer.alloc(Math.min(SNIFF_BYTES, size))
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0)
    if ((buf[0] === 0xff && buf[1] === 0xfe) || (buf[0] === 0xfe && buf[1] === 0xff)) {
      throw new FsToolError(
        'FILE_ENCODING_UNSUPPORTED',
        `${raw} is UTF-16/UTF-32 text (it starts with a byte-order mark); the fs tools read and edit UTF-8 and Latin-1 only. Convert it with bash (iconv) if you must change it.`,
        { path: raw, resolvedPath: absolute },
      )
    }
    if (looksBinary(buf.subarray(0, bytesRead))) {
      throw new FsToolError(
        'FILE_BINARY',
        `${raw} is a binary file (${size.toLocaleString('en-US')} bytes, contains NUL bytes); text tools cannot read or edit it. Inspect it with bash (e.g. \`file\`, \`xxd | head\`) if you need to.`,
        { path: raw, resolvedPath: absolute, size },
      )
    }
  } catch (error) {
    if (error instanceof FsToolError) throw error
    throw fsFailure(error, raw, absolute)
  } finally {
    await handle?.close()
  }
}

/** Throws the abort reason (an `AbortError`) when the signal fired. */
export function checkAborted(signal: AbortSignal): void {
  if (signal.aborted) {
    const error = new Error('aborted')
    error.name = 'AbortError'
    throw error
  }
}

/** Directories that glob and grep skip unless the pattern names them. */
export const DEFAULT_IGNORES = ['node_modules', '.git']

/** Ignore globs for tinyglobby, minus the directories the pattern names explicitly. */
export function ignoreGlobs(pattern: string): string[] {
  return DEFAULT_IGNORES.filter((dir) => !pattern.includes(dir)).map((dir) => `**/${dir}/**`)
}

/** `1 line` / `3 lines`; `many` for irregular plurals (`match` → `matches`). */
export function plural(n: number, word: string, many = `${word}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? word : many}`
}
