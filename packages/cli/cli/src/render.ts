import type { AgentObserver } from '@keel/agent'
import type { ToolResultMessage } from '@keel/llm'
import type { SessionEvent } from '@keel/session'
import { Rejections, refusalText } from './refusal.js'
import { outcomeLine, toolOutcome } from './result-view.js'

/** Where the renderer writes, and whether it may use ANSI styling. */
export interface RenderTarget {
  write(text: string): void
  /** Style with ANSI escapes (dim reasoning, colours); set it when the output is a TTY. */
  color: boolean
}

const DIM = '\x1b[2m'
const NORMAL = '\x1b[22m'
const CYAN = '\x1b[36m'
const GREEN = '\x1b[32m'
const RED = '\x1b[31m'
const YELLOW = '\x1b[33m'
const RESET = '\x1b[39m'

/** One line, at most `max` characters, with newlines shown as `⏎`. */
export function oneLine(text: string, max = 100): string {
  const flat = text
    .replace(/\s*\n\s*/g, ' ⏎ ')
    .replace(/\s+/g, ' ')
    .trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

/** `path=greet.mjs oldString="…"`: a tool call's arguments summarized on one line. */
export function summarizeArguments(raw: string, max = 100): string {
  let parsed: unknown
  try {
    parsed = JSON.parse(raw)
  } catch {
    return oneLine(raw, max)
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return oneLine(raw, max)
  const parts = Object.entries(parsed as Record<string, unknown>).map(([key, value]) => {
    const shown =
      typeof value === 'string'
        ? /^[\w./-]+$/.test(value)
          ? value
          : JSON.stringify(value)
        : JSON.stringify(value)
    return `${key}=${shown}`
  })
  return oneLine(parts.join(' '), max)
}

/** The first of a result's meaningful `lines`, at most `max` characters, and how many more there are. */
function firstOf(lines: readonly string[], max: number): string {
  const more = lines.length > 1 ? ` (+${lines.length - 1} more line${lines.length === 2 ? '' : 's'})` : ''
  return `${oneLine(lines[0] ?? '(no output)', max)}${more}`
}

/** A tool result summarized on one line: its first meaningful line and how many lines it had. */
export function summarizeResult(result: ToolResultMessage, max = 90, errorCode?: string): string {
  return firstOf(toolOutcome(result, errorCode).lines, max)
}

/**
 * A tool result on one line behind its mark — `✓ first line (+2 more lines)`, `✗ exit 1:
 * first line` — and whether it failed (what every summary of a finished call shows).
 */
export function resultLine(
  result: ToolResultMessage,
  errorCode: string | undefined,
  max = 90,
): { failed: boolean; text: string } {
  const outcome = toolOutcome(result, errorCode)
  return { failed: outcome.failed, text: outcomeLine(outcome, firstOf(outcome.lines, max)) }
}

/**
 * An agent observer that prints the conversation as it streams: model text as it arrives,
 * reasoning dimmed (or marked `thinking:` without colour), one line per tool call and per
 * result, retries and plugin notices, and a line per turn end. Nothing here is persisted:
 * the session log is the record.
 */
export function createRenderer(target: RenderTarget): AgentObserver & { finish(): void } {
  let atLineStart = true
  let mode: 'none' | 'text' | 'reasoning' = 'none'
  /** The words of each rejection, by call. */
  const rejections = new Rejections()
  const style = (code: string, text: string, reset: string) =>
    target.color ? `${code}${text}${reset}` : text
  const write = (text: string) => {
    if (text === '') return
    target.write(text)
    atLineStart = text.endsWith('\n')
  }
  const endBlock = () => {
    if (mode === 'reasoning' && target.color) target.write(NORMAL)
    mode = 'none'
    if (!atLineStart) write('\n')
  }
  const line = (text: string) => {
    endBlock()
    write(`${text}\n`)
  }
  return {
    onEvent(event: SessionEvent) {
      if (event.type === 'user/message') {
        const text = event.data.message.content.map((b) => (b.type === 'text' ? b.text : '[image]')).join(' ')
        const from = event.data.source ? ` (${event.data.source})` : ''
        line(style(CYAN, `> you${from}: ${text}`, RESET))
      } else if (event.type === 'turn/end') {
        const error = event.data.error
          ? `: ${event.data.error.code} ${oneLine(event.data.error.message, 120)}`
          : ''
        line(
          style(
            event.data.reason === 'completed' ? GREEN : YELLOW,
            `· turn ${event.data.turn} ${event.data.reason}${error}`,
            RESET,
          ),
        )
      } else if (event.type === 'approval/asked' || event.type === 'approval/decided') {
        rejections.see(event)
      } else if (event.type === 'assistant/message' && event.data.interrupted) {
        line(style(YELLOW, '· (interrupted: the delivered prefix was kept)', RESET))
      }
    },
    onReasoningDelta(delta) {
      if (mode !== 'reasoning') {
        endBlock()
        mode = 'reasoning'
        write(target.color ? `${DIM}thinking: ` : 'thinking: ')
      }
      write(delta.text)
    },
    onTextDelta(delta) {
      if (mode !== 'text') {
        endBlock()
        mode = 'text'
      }
      write(delta.text)
    },
    onToolCallStarted(info) {
      line(style(CYAN, `→ ${info.call.name} ${summarizeArguments(info.call.arguments)}`, RESET))
    },
    onToolCallFinished(info) {
      if (info.refusedBy !== undefined) {
        // a refused call never started: its call line, then who refused it and why
        const text = info.result.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n')
        line(style(CYAN, `→ ${info.call.name} ${summarizeArguments(info.call.arguments)}`, RESET))
        line(
          style(RED, `  ${refusalText(info.call, info.errorCode, text, rejections.of(info.call.id))}`, RESET),
        )
      } else {
        const { failed, text } = resultLine(info.result, info.errorCode)
        line(style(failed ? RED : GREEN, `← ${info.call.name} ${text}`, RESET))
      }
    },
    onToolProgress(notice) {
      // What a subagent started by `task` is doing (other tools' progress stays quiet here).
      if (notice.call.name !== 'task') return
      line(style(DIM, `  … ${notice.call.name}: ${oneLine(notice.progress.message, 120)}`, NORMAL))
    },
    onRetry(notice) {
      line(
        style(
          YELLOW,
          `· model call failed (${notice.error.code}); retry ${notice.attempt} in ${notice.delayMs} ms`,
          RESET,
        ),
      )
    },
    onNotice(notice) {
      line(style(YELLOW, `· ${notice.code}: ${notice.message}`, RESET))
    },
    onDisplay(notice) {
      line(`[${notice.source}] ${notice.text}`)
    },
    finish() {
      endBlock()
    },
  }
}
