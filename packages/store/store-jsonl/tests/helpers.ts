import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isKeelError } from '@keel/base'
import type { ConformanceFixture } from '@keel/store-testkit'
import { afterEach } from 'vitest'
import { JsonlStore } from '../src/index.js'

export function tempHome(): string {
  return mkdtempSync(join(tmpdir(), 'keel-jsonl-'))
}

export async function jsonlFixture(): Promise<ConformanceFixture> {
  const home = tempHome()
  const store = new JsonlStore({ home })
  return {
    store,
    reopen: (options) => new JsonlStore({ ...options, home }),
    appendRaw: async (id, events) => {
      const file = store.fileOf(id)
      writeFileSync(file, readFileSync(file, 'utf8') + events.map((e) => `${JSON.stringify(e)}\n`).join(''))
    },
    setFormatVersion: async (id, version) => {
      const file = store.fileOf(id)
      const lines = readFileSync(file, 'utf8').split('\n')
      const header = JSON.parse(lines[0]!)
      header.formatVersion = version
      lines[0] = JSON.stringify(header)
      writeFileSync(file, lines.join('\n'))
    },
    patchStoredHeader: async (id, patch) => {
      const file = store.fileOf(id)
      const lines = readFileSync(file, 'utf8').split('\n')
      const physical = JSON.parse(lines[0]!)
      physical.header = { ...physical.header, ...patch }
      lines[0] = JSON.stringify(physical)
      writeFileSync(file, lines.join('\n'))
    },
    damageBlob: async (id, sha256, how) => {
      const path = join(store.sessionsDir, id, 'blobs', `${sha256}.json`)
      if (how === 'missing') rmSync(path)
      else {
        const bytes = readFileSync(path)
        bytes[bytes.length >> 1]! ^= 1
        writeFileSync(path, bytes)
      }
    },
    checkpointText: async (id) => {
      const path = join(store.sessionsDir, id, 'session.checkpoint')
      return existsSync(path) ? readFileSync(path, 'utf8') : undefined
    },
    setCheckpointText: async (id, text) => {
      const path = join(store.sessionsDir, id, 'session.checkpoint')
      if (text === undefined) rmSync(path, { force: true })
      else writeFileSync(path, text)
    },
    editLines: async (id, edit) => {
      const file = store.fileOf(id)
      const [header, ...body] = readFileSync(file, 'utf8').split('\n')
      const lines = body.filter((l) => l !== '')
      writeFileSync(file, [header, ...edit(lines)].map((l) => `${l}\n`).join(''))
    },
    cleanup: async () => rmSync(home, { recursive: true, force: true }),
  }
}

const child = fileURLToPath(new URL('./fixtures/child.ts', import.meta.url))

/** Runs the fixture child; resolves the process and a live list of its stdout lines. */
export function runChild(
  args: string[],
  options: { shell?: string } = {},
): { proc: ChildProcess; out: string[] } {
  const out: string[] = []
  const proc = options.shell
    ? spawn('sh', ['-c', `${options.shell}; exec "$0" --import tsx "$@"`, process.execPath, child, ...args], {
        stdio: ['pipe', 'pipe', 'inherit'],
      })
    : spawn(process.execPath, ['--import', 'tsx', child, ...args], { stdio: ['pipe', 'pipe', 'inherit'] })
  let buffered = ''
  proc.stdout!.on('data', (chunk: Buffer) => {
    buffered += chunk.toString()
    const parts = buffered.split('\n')
    buffered = parts.pop()!
    out.push(...parts)
  })
  return { proc, out }
}

export const exited = (proc: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) resolve()
    else proc.once('exit', () => resolve())
  })

/** A fresh `$KEEL_HOME` per call, each removed after the test that made it. */
export function homesRemovedAfterEach(): () => string {
  const homes: string[] = []
  afterEach(() => {
    for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true })
  })
  return () => {
    const h = tempHome()
    homes.push(h)
    return h
  }
}

/** The typed error `promise` rejects with; fails the test when it resolves or rejects untyped. */
export async function failure(
  promise: Promise<unknown>,
): Promise<Error & { code: string; details: Record<string, unknown> }> {
  try {
    await promise
  } catch (error) {
    if (isKeelError(error)) return error as never
    throw error
  }
  throw new Error('expected a rejection')
}
