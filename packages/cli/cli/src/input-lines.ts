// Reading `keel -p --input-format stream-json`: one JSON object per line on stdin, each
// checked by its generated validator (the line types are declared in output-lines.ts).
import { boundIssues, KeelError } from '@keel/base'
import type { UserMessage } from '@keel/llm'
import { inputLineValidators } from './output-lines.generated.js'
import type { InputLine, UserInputLine } from './output-lines.js'

/** Longest input line read (a message with an inline image fits). */
export const MAX_INPUT_LINE_BYTES = 10 * 1024 * 1024

/** A line of stdin that is not an input line: `where` is `stdin:<line number>`. */
export class InputLineError extends KeelError<'INPUT_LINE_INVALID'> {
  constructor(where: string, problem: string) {
    super('INPUT_LINE_INVALID', `${where}: ${problem}`, { where })
  }
}

/** Parses one line (1-based `number`, for the message). */
export function parseInputLine(text: string, number: number): InputLine {
  const where = `stdin:${number}`
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new InputLineError(where, `not JSON (${(error as Error).message})`)
  }
  const kinds = Object.keys(inputLineValidators) as Array<keyof typeof inputLineValidators>
  const type = (value as { type?: unknown } | null)?.type
  const kind = kinds.find((k) => k === type)
  if (typeof value !== 'object' || value === null || Array.isArray(value) || kind === undefined)
    throw new InputLineError(
      where,
      `not an input line: "type" must be ${kinds.map((k) => JSON.stringify(k)).join(' or ')}, got ${JSON.stringify(type ?? null)}`,
    )
  const parsed = inputLineValidators[kind].safeParse(value)
  if (!parsed.success) {
    const issue = boundIssues(parsed.error.issues).issues[0]!
    throw new InputLineError(where, `${issue.path === '' ? 'the line' : issue.path}: ${issue.message}`)
  }
  return parsed.data
}

/** The user message of a `user` line (Claude Code's block shapes → Keel's). Throws for an empty message. */
export function userMessageOf(line: UserInputLine, number: number): UserMessage {
  const { content } = line.message
  const blocks: UserMessage['content'] =
    typeof content === 'string'
      ? [{ type: 'text', text: content }]
      : content.map((b) =>
          b.type === 'text'
            ? { type: 'text', text: b.text }
            : { type: 'image', mediaType: b.source.media_type, data: b.source.data },
        )
  if (!blocks.some((b) => b.type === 'image' || b.text.trim() !== ''))
    throw new InputLineError(`stdin:${number}`, 'the message is empty')
  return { role: 'user', content: blocks }
}

/**
 * Calls `onLine` for each line of `stream` (split at `\n` only, a trailing `\r` dropped:
 * U+2028 inside a JSON string is not a line end), blank lines skipped; `onEnd` once at the
 * end of the stream, or with the error of a read or of a line over the limit. `stop()`
 * stops reading (`onEnd` is then not called).
 */
export function readInputLines(
  stream: NodeJS.ReadableStream,
  onLine: (text: string, number: number) => void,
  onEnd: (error?: Error) => void,
): { stop(): void } {
  let buffer = ''
  let number = 0
  let ended = false
  const detach = () => {
    ended = true
    stream.removeListener('data', onData)
    stream.removeListener('end', onStreamEnd)
    stream.removeListener('error', end)
  }
  const end = (error?: Error) => {
    if (ended) return
    detach()
    onEnd(error)
  }
  const take = (line: string) => {
    number++
    const text = line.endsWith('\r') ? line.slice(0, -1) : line
    if (text.trim() !== '') onLine(text, number)
  }
  const onData = (chunk: string | Buffer) => {
    buffer += chunk.toString()
    let at = buffer.indexOf('\n')
    while (at !== -1 && !ended) {
      take(buffer.slice(0, at))
      buffer = buffer.slice(at + 1)
      at = buffer.indexOf('\n')
    }
    if (!ended && Buffer.byteLength(buffer) > MAX_INPUT_LINE_BYTES)
      end(new InputLineError(`stdin:${number + 1}`, `a line over ${MAX_INPUT_LINE_BYTES / 1024 / 1024} MiB`))
  }
  const onStreamEnd = () => {
    if (buffer !== '') take(buffer)
    buffer = ''
    end()
  }
  stream.setEncoding('utf8')
  stream.on('data', onData)
  stream.on('end', onStreamEnd)
  stream.on('error', end)
  return {
    stop() {
      if (!ended) detach()
      stream.pause()
    },
  }
}
