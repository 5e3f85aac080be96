import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach } from 'vitest'

const made: string[] = []
afterEach(() => {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** A fresh temporary directory, removed after the test. */
export function tempDir(prefix = 'keel-hooks-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.push(dir)
  return dir
}

/** Writes `text` at `dir/name` (parents created); executable when `mode` says so. Returns the path. */
export function writeFile(dir: string, name: string, text: string, mode?: number): string {
  const path = join(dir, name)
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, text)
  if (mode !== undefined) chmodSync(path, mode)
  return path
}

/** Writes a JSON settings file. */
export function writeJson(dir: string, name: string, value: unknown): string {
  return writeFile(dir, name, `${JSON.stringify(value, null, 2)}\n`)
}

/** Is a process with this pid alive (running or sleeping; a zombie counts as dead)? Linux /proc. */
export function alive(pid: number): boolean {
  if (!existsSync(`/proc/${pid}/stat`)) return false
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch (error) {
    if (
      (error as NodeJS.ErrnoException).code === 'ENOENT' ||
      (error as NodeJS.ErrnoException).code === 'ESRCH'
    )
      return false
    throw error
  }
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  return state !== 'Z' && state !== 'X'
}

/** Polls `predicate` until it holds or `timeoutMs` passes (generous: machines are loaded). */
export async function eventually(predicate: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  const until = Date.now() + timeoutMs
  while (Date.now() < until) {
    if (predicate()) return true
    await new Promise((r) => setTimeout(r, 25))
  }
  return predicate()
}
