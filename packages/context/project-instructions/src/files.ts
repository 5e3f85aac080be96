import { constants } from 'node:fs'
import { open, realpath, stat } from 'node:fs/promises'
import { dirname, join, relative, sep } from 'node:path'
import { errorMessage } from '@keel/base'

/** What reading one candidate file gave. */
export type ReadOutcome =
  | {
      readonly kind: 'file'
      readonly realPath: string
      /** The text read: the whole file, or its first `limit` bytes cut at a line or character boundary. */
      readonly text: string
      /** The file's size in bytes. */
      readonly bytes: number
      /** Bytes of the file `text` holds (less than `bytes` when cut). */
      readonly deliveredBytes: number
    }
  | { readonly kind: 'missing' }
  | { readonly kind: 'not-a-file' }
  | { readonly kind: 'unreadable'; readonly message: string }

const errno = (error: unknown): string | undefined => (error as NodeJS.ErrnoException).code

/**
 * Reads at most `limit` bytes of a regular text file, never blocking on a pipe or device
 * (opened non-blocking, checked to be a regular file on the open descriptor), and never
 * reading more than it keeps. A cut falls on the last line break in the last quarter of the
 * kept bytes, else on a UTF-8 character boundary. A file holding a NUL byte is not text
 * (`not-a-file`).
 */
export async function readBounded(path: string, limit: number): Promise<ReadOutcome> {
  let realPath: string
  try {
    realPath = await realpath(path)
  } catch (error) {
    const code = errno(error)
    if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP') return { kind: 'missing' }
    return { kind: 'unreadable', message: errorMessage(error) }
  }
  let handle: Awaited<ReturnType<typeof open>>
  try {
    handle = await open(realPath, constants.O_RDONLY | constants.O_NONBLOCK)
  } catch (error) {
    if (errno(error) === 'ENOENT') return { kind: 'missing' }
    if (errno(error) === 'EISDIR') return { kind: 'not-a-file' }
    return { kind: 'unreadable', message: errorMessage(error) }
  }
  try {
    const info = await handle.stat()
    if (!info.isFile()) return { kind: 'not-a-file' }
    const want = Math.min(info.size, Math.max(0, limit))
    const buffer = Buffer.alloc(want)
    let got = 0
    while (got < want) {
      const { bytesRead } = await handle.read(buffer, got, want - got, got)
      if (bytesRead === 0) break
      got += bytesRead
    }
    const kept = buffer.subarray(0, got)
    if (kept.includes(0)) return { kind: 'not-a-file' }
    const whole = got >= info.size
    const end = whole ? got : cutPoint(kept)
    return {
      kind: 'file',
      realPath,
      text: kept.subarray(0, end).toString('utf8'),
      bytes: info.size,
      deliveredBytes: end,
    }
  } catch (error) {
    return { kind: 'unreadable', message: errorMessage(error) }
  } finally {
    await handle.close()
  }
}

/** Where to cut `bytes` (all of them are kept at most): a line break near the end, else a character boundary. */
export function cutPoint(bytes: Uint8Array): number {
  const newline = bytes.lastIndexOf(10)
  if (newline >= 0 && newline + 1 >= bytes.length * 0.75) return newline + 1
  // Find the lead byte of the last character (at most 3 continuation bytes, 10xxxxxx, follow it).
  let lead = bytes.length - 1
  while (lead > 0 && bytes.length - lead < 4 && (bytes[lead]! & 0xc0) === 0x80) lead--
  if (lead < 0) return 0
  const byte = bytes[lead]!
  const length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
  return bytes.length - lead >= length ? bytes.length : lead
}

/** The project root: the nearest directory at or above `cwd` holding `.git` (a directory or a worktree's file), else `cwd`. Both real paths. */
export async function findProjectRoot(cwd: string): Promise<{ root: string; cwd: string; git: boolean }> {
  const real = await realpath(cwd)
  for (let dir = real, i = 0; i < 256; i++) {
    try {
      await stat(join(dir, '.git'))
      return { root: dir, cwd: real, git: true }
    } catch (error) {
      const code = errno(error)
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw error
    }
    const parent = dirname(dir)
    if (parent === dir) break
    dir = parent
  }
  return { root: real, cwd: real, git: false }
}

/** `child` is `parent` or lies under it (absolute, normalized paths). */
export function isInside(child: string, parent: string): boolean {
  if (child === parent) return true
  return child.startsWith(parent.endsWith(sep) ? parent : parent + sep)
}

/** The directories from `root` down to `cwd`, both included (`cwd` lies under `root`). */
export function directoriesDown(root: string, cwd: string): string[] {
  const rest = relative(root, cwd)
  const dirs = [root]
  if (rest === '') return dirs
  let dir = root
  for (const part of rest.split(sep)) {
    dir = join(dir, part)
    dirs.push(dir)
  }
  return dirs
}
