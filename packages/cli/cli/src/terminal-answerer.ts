import type { Readable, Writable } from 'node:stream'
import { StringDecoder } from 'node:string_decoder'
import type { ApprovalAnswer, ApprovalAnswerer, ApprovalQuestion } from '@keel/agent'
import { errorMessage } from '@keel/base'
import { changeSummary, type ProposedChange, proposedChange } from './approval-diff.js'
import { approvalLegend, parseAnswer, printable } from './approval-keys.js'

export { parseAnswer } from './approval-keys.js'

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
  /** Called before a question is printed (ends a line of streamed text, so the question starts its own). */
  beforeQuestion?: () => void
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

/** Most diff lines printed with a question. */
const MAX_DIFF_LINES = 80

/**
 * The question as shown: what wants to run (an edit as a unified diff), why it is asked,
 * and the choices — the keys of the interactive UI, `a` naming what it allows.
 */
export function renderQuestion(question: ApprovalQuestion, change?: ProposedChange | string): string {
  const { facts } = question.info
  const asker = question.delegate
    ? ` for subagent ${printable(question.delegate.agent)} (session ${printable(question.delegate.session)})`
    : ''
  const lines = [`Approval needed: ${question.toolName}${asker} (call ${question.callId})`]
  if (facts.command !== undefined) lines.push(`  command: ${printable(facts.command)}`)
  if (typeof change === 'object') {
    lines.push(`  ${printable(changeSummary(change))}`)
    for (const line of change.lines.slice(0, MAX_DIFF_LINES)) lines.push(`    ${printable(line.text)}`)
    if (change.lines.length > MAX_DIFF_LINES)
      lines.push(`    … ${change.lines.length - MAX_DIFF_LINES} more diff lines`)
  } else {
    for (const path of facts.rawPaths ?? []) lines.push(`  path: ${printable(path)}`)
    if (typeof change === 'string') lines.push(`  (${printable(change)})`)
  }
  lines.push(`  why: ${printable(question.reason)}`)
  lines.push(`  ${printable(approvalLegend(question.rule, 'line'))}`)
  return `${lines.join('\n')}\n> `
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
    const change = await proposedChange(question).catch(
      (error: unknown) => `the diff could not be made: ${errorMessage(error)}`,
    )
    options.beforeQuestion?.()
    options.output.write(renderQuestion(question, change))
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
