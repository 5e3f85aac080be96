import type { Readable, Writable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import { type ApprovalAnswer, type ApprovalAnswerer, type ApprovalQuestion, describeRule } from '@keel/agent'

/** Options of {@link createTerminalAnswerer}. */
export interface TerminalAnswererOptions {
  /** Where answers are typed (a TTY's stdin, a pipe, a test stream). */
  input: Readable
  /** Where questions are printed. */
  output: Writable
  /** Default `terminal`. */
  name?: string
  /** Unrecognized answers before the question counts as rejected. Default 3. */
  maxAttempts?: number
}

/** Longest answer line kept; the rest of an over-long line is dropped. */
const MAX_LINE = 4096

/** Reads lines from a stream, one request at a time; `null` once the stream has ended. */
class LineReader {
  readonly #lines: string[] = []
  readonly #waiters: Array<(line: string | null) => void> = []
  readonly #decoder = new StringDecoder('utf8')
  #partial = ''
  #ended = false

  constructor(input: Readable) {
    input.on('data', (chunk: Buffer | string) => {
      this.#push(typeof chunk === 'string' ? chunk : this.#decoder.write(chunk))
    })
    const end = () => {
      if (this.#ended) return
      this.#ended = true
      const rest = this.#partial + this.#decoder.end()
      this.#partial = ''
      if (rest !== '') this.#deliver(rest)
      for (const waiter of this.#waiters.splice(0)) waiter(null)
    }
    input.on('end', end)
    input.on('close', end)
    input.on('error', end)
  }

  #push(text: string): void {
    let rest = this.#partial + text
    let newline = rest.indexOf('\n')
    while (newline >= 0) {
      this.#deliver(rest.slice(0, newline))
      rest = rest.slice(newline + 1)
      newline = rest.indexOf('\n')
    }
    this.#partial = rest.slice(0, MAX_LINE)
  }

  #deliver(line: string): void {
    const clean = line.replace(/\r$/u, '').slice(0, MAX_LINE)
    const waiter = this.#waiters.shift()
    if (waiter) waiter(clean)
    else this.#lines.push(clean)
  }

  /** The next line, or `null` when the input ended or `signal` fired. */
  next(signal: AbortSignal): Promise<string | null> {
    const queued = this.#lines.shift()
    if (queued !== undefined) return Promise.resolve(queued)
    if (this.#ended || signal.aborted) return Promise.resolve(null)
    return new Promise((resolve) => {
      const waiter = (line: string | null) => {
        signal.removeEventListener('abort', onAbort)
        resolve(line)
      }
      const onAbort = () => {
        const index = this.#waiters.indexOf(waiter)
        if (index >= 0) this.#waiters.splice(index, 1)
        resolve(null)
      }
      signal.addEventListener('abort', onAbort, { once: true })
      this.#waiters.push(waiter)
    })
  }
}

/** Removes control characters (escape sequences a model could plant in a command) before printing. */
function printable(text: string): string {
  let out = ''
  for (const char of text) {
    const code = char.codePointAt(0)!
    out += code < 0x20 || (code >= 0x7f && code <= 0x9f) ? '?' : char
  }
  return out
}

/** The question as shown: what wants to run, why it is asked, and the choices. */
export function renderQuestion(question: ApprovalQuestion): string {
  const { facts } = question.info
  const asker = question.delegate
    ? ` for subagent ${printable(question.delegate.agent)} (session ${printable(question.delegate.session)})`
    : ''
  const lines = [`Approval needed: ${question.toolName}${asker} (call ${question.callId})`]
  if (facts.command !== undefined) lines.push(`  command: ${printable(facts.command)}`)
  for (const path of facts.rawPaths ?? []) lines.push(`  path: ${printable(path)}`)
  lines.push(`  why: ${printable(question.reason)}`)
  lines.push(
    `  [y] allow once   [a] allow ${printable(describeRule(question.rule))} for this session   [n <reason>] reject`,
  )
  return `${lines.join('\n')}\n> `
}

/** Reads one answer: `y`/`yes`, `a`/`always`, `n`/`no` followed by an optional reason. */
export function parseAnswer(line: string): ApprovalAnswer | undefined {
  const match = /^\s*(y|yes|a|always|n|no)\b[\s:,-]*(.*)$/iu.exec(line)
  if (!match) return undefined
  const word = match[1]!.toLowerCase()
  const reason = match[2]!.trim()
  if (word === 'y' || word === 'yes') return { outcome: 'allow-once' }
  if (word === 'a' || word === 'always') return { outcome: 'allow-session' }
  return { outcome: 'reject', reason: reason === '' ? 'rejected by the user' : reason }
}

/**
 * An interactive answerer over a readable/writable pair (a terminal, a pipe): prints each
 * question, reads one line, and asks again on an unrecognized line (up to `maxAttempts`,
 * then rejects). Questions are put one at a time, in the order they arrive. When the input
 * has ended it answers nothing (the chain then fails closed); an aborted question stops
 * waiting at once.
 */
export function createTerminalAnswerer(options: TerminalAnswererOptions): ApprovalAnswerer {
  const reader = new LineReader(options.input)
  const maxAttempts = options.maxAttempts ?? 3
  let queue: Promise<unknown> = Promise.resolve()
  const ask = async (question: ApprovalQuestion): Promise<ApprovalAnswer | undefined> => {
    options.output.write(renderQuestion(question))
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const line = await reader.next(question.signal)
      if (line === null) {
        options.output.write('\n')
        return undefined
      }
      const answer = parseAnswer(line)
      if (answer) return answer
      if (attempt < maxAttempts) options.output.write('Please answer y, a, or n <reason>.\n> ')
    }
    options.output.write('No valid answer; rejected.\n')
    return { outcome: 'reject', reason: 'no valid answer was given' }
  }
  return {
    name: options.name ?? 'terminal',
    kind: 'interactive',
    answer(question) {
      const turn = queue.then(() => ask(question))
      queue = turn.catch(() => undefined)
      return turn
    },
  }
}
