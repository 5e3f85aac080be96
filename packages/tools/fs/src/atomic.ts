import { randomBytes } from 'node:crypto'
import { chmod, lstat, mkdir, open, realpath, rename, stat, unlink } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { checkAborted, FsToolError, fsFailure } from './common.js'

/** Deeper than this, a path is refused instead of walked (no real tree is this deep). */
const MAX_DEPTH = 512

/**
 * Creates the missing directories above a file, one `mkdir` at a time from the deepest
 * existing ancestor, checking `signal` between steps. Node's `mkdir({ recursive: true })` is
 * not used: on paths like `/proc/self/outside` (where `mkdir` answers ENOENT although the
 * parent exists) it retries forever inside libuv's thread pool at 100 % CPU, ignoring any
 * abort, and four such calls starve every later file operation of the process.
 */
export async function makeParents(raw: string, dir: string, signal: AbortSignal): Promise<void> {
  const missing: string[] = []
  let current = dir
  for (;;) {
    checkAborted(signal)
    try {
      const st = await stat(current)
      if (!st.isDirectory()) {
        throw new FsToolError(
          'NOT_A_DIRECTORY',
          `${current} is a file, so ${raw} cannot be created under it`,
          {
            path: raw,
            resolvedPath: current,
          },
        )
      }
      break
    } catch (error) {
      if (error instanceof FsToolError) throw error
      const code = (error as NodeJS.ErrnoException).code
      if (code !== 'ENOENT') throw fsFailure(error, raw, current)
      const parent = dirname(current)
      if (parent === current || missing.length >= MAX_DEPTH) throw fsFailure(error, raw, current)
      missing.push(current)
      current = parent
    }
  }
  for (const directory of missing.reverse()) {
    checkAborted(signal)
    try {
      await mkdir(directory)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (
        code === 'EEXIST' &&
        (await stat(directory).then(
          (s) => s.isDirectory(),
          () => false,
        ))
      )
        continue
      throw new FsToolError(
        'FS_ERROR',
        `cannot create the directory ${directory} for ${raw}: the file system refused (${code ?? String(error)}); write somewhere else`,
        { path: raw, resolvedPath: directory, systemCode: code },
      )
    }
  }
}

/**
 * The file a write to `absolute` must replace: `absolute` itself, or — when it is a
 * symbolic link — the file it points to, so the link stays a link.
 */
async function writeTarget(absolute: string): Promise<string> {
  try {
    if ((await lstat(absolute)).isSymbolicLink()) return await realpath(absolute)
  } catch {
    // missing (a new file) or a dangling link: write at the path as given
  }
  return absolute
}

/**
 * Writes `bytes` to `absolute` atomically: into a temporary file beside it (same directory,
 * so the same file system), flushed to disk, given the old file's permission bits (or the
 * default for new files), then renamed over the target. A reader sees the old content or
 * the new, never a mix; a crash leaves at most a `.keel-*.tmp` file. A symbolic link is
 * kept and its target replaced. Hard links to the old file keep the old content (rename
 * replaces the directory entry), as with any editor that saves atomically.
 */
export async function writeFileAtomic(
  raw: string,
  absolute: string,
  bytes: Uint8Array,
  signal: AbortSignal,
): Promise<void> {
  const target = await writeTarget(absolute)
  let mode: number | undefined
  try {
    mode = (await stat(target)).mode & 0o7777
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw fsFailure(error, raw, absolute)
  }
  checkAborted(signal)
  const temp = join(dirname(target), `.${basename(target)}.keel-${randomBytes(6).toString('hex')}.tmp`)
  let handle: Awaited<ReturnType<typeof open>> | undefined
  try {
    handle = await open(temp, 'wx', mode ?? 0o666)
    await handle.writeFile(bytes)
    await handle.sync()
    await handle.close()
    handle = undefined
    if (mode !== undefined) await chmod(temp, mode) // open() applied the umask; keep the old bits exactly
    checkAborted(signal)
    await rename(temp, target)
  } catch (error) {
    await handle?.close().catch(() => undefined)
    await unlink(temp).catch(() => undefined) // best effort: the temporary file may not exist
    if (error instanceof Error && error.name === 'AbortError') throw error
    throw fsFailure(error, raw, absolute)
  }
}
