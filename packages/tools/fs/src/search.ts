import { spawn } from 'node:child_process'
import { accessSync, constants } from 'node:fs'
import { delimiter, join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { decodeForDisplay } from './encoding.js'

/** One matching line. */
export interface LineMatch {
  file: string
  /** 1-based. */
  line: number
  text: string
}

/** What a search engine is asked: a regex over the lines of these files, in this order. */
export interface SearchRequest {
  pattern: string
  ignoreCase: boolean
  files: readonly string[]
  /** Files (of `files`) that are not UTF-8: searched as Latin-1, as read_file shows them. */
  latin1?: ReadonlySet<string>
  /** Stop after this many matches (one more is collected to know there are more). */
  limit: number
  signal: AbortSignal
}

/** What an engine found; `unsupported` means "this engine cannot run this pattern". */
export type SearchResult = { matches: LineMatch[] } | { unsupported: string }

/** Which engine searches: ripgrep when found on PATH (`auto`), or the one named. */
export type GrepEngine = 'auto' | 'ripgrep' | 'javascript'

let cachedRg: { path: string | undefined; from: string } | undefined

/** The `rg` executable on `PATH` (the lookup is cached per PATH value), or undefined. */
export function findRipgrep(pathVariable = process.env.PATH ?? ''): string | undefined {
  if (cachedRg?.from === pathVariable) return cachedRg.path
  let found: string | undefined
  for (const dir of pathVariable.split(delimiter)) {
    if (dir === '') continue
    const candidate = join(dir, 'rg')
    try {
      accessSync(candidate, constants.X_OK)
      found = candidate
      break
    } catch {
      // not here: try the next directory
    }
  }
  cachedRg = { path: found, from: pathVariable }
  return found
}

/** Splits the file list into argument batches well under the kernel's argument limit. */
function batches(files: readonly string[], maxChars = 100_000): string[][] {
  const out: string[][] = []
  let current: string[] = []
  let size = 0
  for (const f of files) {
    if (current.length > 0 && size + f.length + 1 > maxChars) {
      out.push(current)
      current = []
      size = 0
    }
    current.push(f)
    size += f.length + 1
  }
  if (current.length > 0) out.push(current)
  return out
}

function abortError(): Error {
  const error = new Error('aborted')
  error.name = 'AbortError'
  return error
}

/** Runs ripgrep over one batch; resolves with the matches, or `unsupported` for a pattern its regex syntax rejects. */
function ripgrepBatch(
  rg: string,
  request: SearchRequest,
  files: string[],
  room: number,
  latin1: boolean,
): Promise<SearchResult> {
  return new Promise((resolve, reject) => {
    const args = ['--no-config', '--no-ignore', '--hidden', '--text', '--crlf', '--threads', '1']
    if (latin1) args.push('--encoding', 'latin1')
    args.push(
      '--line-number',
      '--with-filename',
      '--null',
      '--no-heading',
      '--color',
      'never',
      '--no-messages',
    )
    if (request.ignoreCase) args.push('--ignore-case')
    args.push('--regexp', request.pattern, '--', ...files)
    // a bare environment: no RIPGREP_CONFIG_PATH or anything else that could change its behaviour
    const child = spawn(rg, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '' },
    })
    const matches: LineMatch[] = []
    let pending = Buffer.alloc(0)
    let stderr = ''
    let done = false
    const finish = (result: SearchResult | Error) => {
      if (done) return
      done = true
      request.signal.removeEventListener('abort', onAbort)
      if (result instanceof Error) reject(result)
      else resolve(result)
    }
    const onAbort = () => {
      child.kill('SIGKILL')
      finish(abortError())
    }
    request.signal.addEventListener('abort', onAbort, { once: true })
    const take = (record: Buffer) => {
      const nul = record.indexOf(0)
      if (nul < 0) return
      const rest = record.subarray(nul + 1)
      const colon = rest.indexOf(0x3a)
      if (colon < 0) return
      let text = rest.subarray(colon + 1)
      if (text[text.length - 1] === 0x0d) text = text.subarray(0, text.length - 1)
      matches.push({
        file: record.subarray(0, nul).toString('utf8'),
        line: Number(rest.subarray(0, colon).toString('latin1')),
        text: decodeForDisplay(text),
      })
    }
    child.stdout.on('data', (chunk: Buffer) => {
      if (done) return
      let data = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
      for (let nl = data.indexOf(0x0a); nl >= 0; nl = data.indexOf(0x0a)) {
        take(data.subarray(0, nl))
        data = data.subarray(nl + 1)
        if (matches.length >= room) {
          child.kill('SIGKILL')
          finish({ matches })
          return
        }
      }
      pending = Buffer.from(data)
    })
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 10_000) stderr += chunk.toString('utf8')
    })
    child.on('error', (error) => finish(error))
    child.on('close', (code) => {
      if (pending.length > 0 && matches.length < room) take(pending)
      if (code === 2 && /regex|pars/i.test(stderr)) finish({ unsupported: stderr.trim() })
      else finish({ matches })
    })
  })
}

/** Searches with ripgrep (linear-time regex engine: no catastrophic backtracking). */
export async function searchWithRipgrep(rg: string, request: SearchRequest): Promise<SearchResult> {
  const order = new Map(request.files.map((f, i) => [f, i]))
  const latin1 = request.latin1 ?? new Set<string>()
  const matches: LineMatch[] = []
  for (const asLatin1 of [false, true]) {
    const group = request.files.filter((f) => latin1.has(f) === asLatin1)
    let found = 0
    for (const batch of batches(group)) {
      const result = await ripgrepBatch(rg, request, batch, request.limit + 1 - found, asLatin1)
      if ('unsupported' in result) return result
      matches.push(...result.matches)
      found += result.matches.length
      if (found > request.limit) break
    }
  }
  // the two groups interleave in path order: merge them back into it
  matches.sort((a, b) => order.get(a.file)! - order.get(b.file)! || a.line - b.line)
  return { matches: matches.slice(0, request.limit + 1) }
}

/** The worker's source: plain JavaScript, evaluated, so it runs the same from src/ and dist/. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads')
const { readFileSync } = require('node:fs')
const { pattern, flags, files, room } = workerData
const regex = new RegExp(pattern, flags)
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })
const matches = []
outer: for (const file of files) {
  let bytes
  try { bytes = readFileSync(file) } catch { continue }
  let text
  try { text = utf8.decode(bytes) } catch { text = Buffer.from(bytes).toString('latin1') }
  const lines = text.split(/\\r?\\n/)
  for (let i = 0; i < lines.length; i++) {
    regex.lastIndex = 0
    if (!regex.test(lines[i])) continue
    matches.push({ file, line: i + 1, text: lines[i] })
    if (matches.length >= room) break outer
  }
}
parentPort.postMessage(matches)
`

/**
 * Searches with the JavaScript regex engine in a worker thread, so a pattern with
 * catastrophic backtracking blocks neither the agent's event loop nor Ctrl-C: on abort (or
 * the call's deadline, which aborts the signal) the worker is terminated mid-match.
 */
export function searchWithJavaScript(request: SearchRequest, flags: string): Promise<SearchResult> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { pattern: request.pattern, flags, files: request.files, room: request.limit + 1 },
    })
    let done = false
    const finish = (result: SearchResult | Error) => {
      if (done) return
      done = true
      request.signal.removeEventListener('abort', onAbort)
      void worker.terminate()
      if (result instanceof Error) reject(result)
      else resolve(result)
    }
    const onAbort = () => finish(abortError())
    request.signal.addEventListener('abort', onAbort, { once: true })
    worker.on('message', (matches: LineMatch[]) => finish({ matches }))
    worker.on('error', (error) => finish(error))
    worker.on('exit', (code) => finish(new Error(`the search worker exited (code ${code}) without a result`)))
  })
}
