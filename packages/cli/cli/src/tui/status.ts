import { Text } from 'ink'
import { createElement as h, type ReactElement, useEffect, useState } from 'react'
import { oneLine } from '../render.js'
import { dollars, type SessionUsage, shortCount } from '../session-usage.js'

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']

/** The spinner: what is going on, for how long, and which key stops it. */
export function Spinner({ since, waiting }: { since: number; waiting: boolean }): ReactElement {
  const [now, setNow] = useState(Date.now())
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 120)
    return () => clearInterval(timer)
  }, [])
  const seconds = Math.floor((now - since) / 1000)
  const frame = SPINNER[Math.floor(now / 120) % SPINNER.length]
  return waiting
    ? h(Text, { color: 'yellow' }, `${frame} waiting for your answer… ${seconds}s (y / a / n, Esc rejects)`)
    : h(Text, { color: 'magenta' }, `${frame} working… ${seconds}s (Esc interrupts)`)
}

/** The footer: how full the context window is, tokens in / out / cached this session, and the cost. */
export function footerText(usage: SessionUsage, contextWindow: number | undefined, model: string): string {
  const { total } = usage
  const context =
    usage.lastContextTokens === undefined
      ? 'context —'
      : contextWindow
        ? `context ${shortCount(usage.lastContextTokens)}/${shortCount(contextWindow)} (${Math.round((usage.lastContextTokens / contextWindow) * 100)}%)`
        : `context ${shortCount(usage.lastContextTokens)}`
  const tokens = `↑${shortCount(total.inputTokens)} ↓${shortCount(total.outputTokens)} cached ${shortCount(total.cacheHitTokens)}`
  const cost = usage.unpriced.length > 0 && total.costUsd === 0 ? 'cost unknown' : dollars(total.costUsd)
  return `${model} · ${context} · ${tokens} · ${cost}${usage.unpriced.length > 0 && total.costUsd > 0 ? '+' : ''}`
}

/** Most queued messages listed; the rest are counted. */
const QUEUED_SHOWN = 3

/**
 * The queue under the spinner: each message (clipped), and what the keys do with it — only
 * once keys are `listening` (before that an Enter is the terminal's line feed, not a key).
 */
export function queuedLines(
  queued: readonly string[],
  paused: boolean,
  busy: boolean,
  listening: boolean,
): ReactElement[] {
  if (queued.length === 0) return []
  const lines = queued
    .slice(0, QUEUED_SHOWN)
    .map((text, i) =>
      h(Text, { key: `queued-${i}`, color: 'cyan', dimColor: true }, `⋯ queued: ${oneLine(text, 100)}`),
    )
  if (queued.length > QUEUED_SHOWN)
    lines.push(
      h(Text, { key: 'queued-more', dimColor: true }, `⋯ and ${queued.length - QUEUED_SHOWN} more queued`),
    )
  const hint = !listening
    ? ''
    : paused
      ? `${queued.length} queued message${queued.length === 1 ? ' waits' : 's wait'}: Enter runs ${queued.length === 1 ? 'it' : 'them'}, ↑ takes the last back to edit`
      : busy
        ? '↑ takes the last queued message back to edit'
        : ''
  if (hint !== '') lines.push(h(Text, { key: 'queued-hint', color: 'yellow' }, hint))
  return lines
}

/**
 * The input line with its cursor (an inverse cell), over as many lines as the text has;
 * the prompt mark shows whether a turn runs.
 */
export function PromptView({
  text,
  cursor,
  busy,
}: {
  text: string
  cursor: number
  busy: boolean
}): ReactElement {
  const before = text.slice(0, cursor)
  const at = text[cursor]
  const after = text.slice(cursor + 1)
  const mark = h(Text, { color: busy ? 'gray' : 'green', bold: true }, busy ? '… ' : '› ')
  // A newline under the cursor is drawn as a cell at the end of its line, then the break.
  const cell = at === undefined || at === '\n' ? ' ' : at
  return h(
    Text,
    null,
    mark,
    before.replace(/\n/gu, '\n  '),
    h(Text, { inverse: true }, cell),
    at === '\n' ? '\n  ' : '',
    after.replace(/\n/gu, '\n  '),
  )
}
