import type { ToolCallBlock } from '@keel/llm'
import type { SessionEvent } from '@keel/session'
import { isRefusal, Rejections, refusalText } from '../refusal.js'
import { oneLine, resultLine, summarizeArguments } from '../render.js'
import { resultText } from '../result-view.js'
import type { HistoryItem } from './feed.js'
import { typedPart } from './mentions.js'

/** A transcript line before it is numbered. */
export type TranscriptLine = Pick<HistoryItem, 'kind' | 'text'>

/** How much of an earlier conversation a resumed session shows. */
export const RESUME_TURNS = 10

const textOf = (content: ReadonlyArray<{ type: string; text?: string }>) =>
  content
    .flatMap((b) =>
      b.type === 'text' && b.text !== undefined ? [b.text] : b.type === 'image' ? ['[image]'] : [],
    )
    .join('')

/** Lines of a plugin's message shown (`/init` sends a whole repository overview). */
const PLUGIN_MESSAGE_LINES = 3

/**
 * A user message as the transcript shows it: `(schedule/s1) text`, attachments named; a
 * plugin's message (one with a source) cut to its first lines, with how many more it has.
 */
export function userLine(event: SessionEvent<'user/message'>): string {
  const { text, attached } = typedPart(event.data.message)
  const source = event.data.source
  const lines = text.split('\n')
  const shown =
    source !== undefined && lines.length > PLUGIN_MESSAGE_LINES
      ? `${lines.slice(0, PLUGIN_MESSAGE_LINES).join('\n')}\n… (+${lines.length - PLUGIN_MESSAGE_LINES} more lines: keel sessions show has all)`
      : text
  return `${source ? `(${source}) ` : ''}${shown}${attached.length > 0 ? ` (attached: ${attached.join(', ')})` : ''}`
}

/**
 * The earlier conversation of a resumed session as the interactive UI shows it: the last
 * `turns` turns — what was typed, the answers, one line per tool call and per result
 * (the output collapsed to its first line and a count), how a turn ended when it did not
 * complete — after a line saying how many earlier turns are left out. Reasoning is left
 * out (it is in the log and in `keel sessions show`).
 */
export function transcriptOf(
  events: readonly SessionEvent[],
  sessionId: string,
  turns = RESUME_TURNS,
): TranscriptLine[] {
  const starts = events.filter((e) => e.type === 'turn/start')
  const first = starts.length > turns ? starts[starts.length - turns]!.seq : 0
  const lines: TranscriptLine[] = []
  if (starts.length > turns) {
    const hidden = starts.length - turns
    lines.push({
      kind: 'info',
      text: `… ${hidden} earlier turn${hidden === 1 ? '' : 's'} (keel sessions show ${sessionId} lists everything)`,
    })
  }
  // what a refusal line names: the call, and the words of a person's rejection
  const calls = new Map<string, ToolCallBlock>()
  const rejections = new Rejections()
  for (const event of events) {
    rejections.see(event)
    if (event.seq < first) continue
    switch (event.type) {
      case 'user/message': {
        // a direct run's note to the model: its `!cmd` line and result are shown instead
        if (event.data.source?.startsWith('direct/')) break
        lines.push({ kind: 'user', text: userLine(event) })
        break
      }
      case 'tool/direct-call': {
        const command = /^\{"command":(".*")\}$/u.exec(event.data.arguments)?.[1]
        lines.push(
          command !== undefined && event.data.name === 'bash'
            ? { kind: 'user', text: `!${JSON.parse(command) as string}` }
            : { kind: 'call', text: `${event.data.name} ${summarizeArguments(event.data.arguments, 120)}` },
        )
        break
      }
      case 'assistant/message': {
        const text = textOf(event.data.message.content).trim()
        if (text !== '') lines.push({ kind: 'assistant', text })
        if (event.data.interrupted)
          lines.push({ kind: 'notice', text: 'interrupted: the delivered prefix was kept' })
        break
      }
      case 'tool/call':
        calls.set(event.data.callId, {
          type: 'tool-call',
          id: event.data.callId,
          name: event.data.name,
          arguments: event.data.arguments,
        })
        lines.push({
          kind: 'call',
          text: `${event.data.name} ${summarizeArguments(event.data.arguments, 120)}`,
        })
        break
      case 'tool/result':
      case 'tool/direct-result': {
        const { message, errorCode } = event.data
        const call = calls.get(message.toolCallId)
        if (call && isRefusal('refusedBy' in event.data ? event.data.refusedBy : undefined, errorCode)) {
          // as the live UI showed it (tui/feed.ts): who refused the call and why
          const text = resultText(message)
          lines.push({ kind: 'refused', text: refusalText(call, errorCode, text, rejections.of(call.id)) })
          break
        }
        const { failed, text } = resultLine(message, errorCode, 120)
        lines.push({ kind: failed ? 'error' : 'result', text: `${message.toolName} ${text}` })
        break
      }
      case 'turn/end':
        if (event.data.reason !== 'completed') {
          const error = event.data.error
            ? `: ${event.data.error.code} ${oneLine(event.data.error.message, 160)}`
            : ''
          lines.push({ kind: 'notice', text: `turn ${event.data.turn} ${event.data.reason}${error}` })
        }
        break
      default:
        break
    }
  }
  if (lines.length > 0) lines.push({ kind: 'info', text: '── resumed here ──' })
  return lines
}
