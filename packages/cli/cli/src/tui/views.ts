import { Box, Static, Text } from 'ink'
import { createElement as h, type ReactElement } from 'react'
import { changeSummary, type DiffLine } from '../approval-diff.js'
import { approvalKeys, LEGEND_GAP, printable } from '../approval-keys.js'
import { summarizeArguments } from '../render.js'
import type { HistoryItem, PendingApproval } from './feed.js'
import { renderMarkdown } from './markdown.js'
import { hang, hangingText, wrapEachLine } from './wrap.js'

/** One finished entry of the transcript. */
export function Item({ item, width }: { item: HistoryItem; width: number }): ReactElement {
  switch (item.kind) {
    case 'user':
      return h(Text, { color: 'cyan' }, hangingText('> ', item.text, 2, width))
    case 'assistant':
      return h(Text, null, renderMarkdown(item.text, width))
    case 'reasoning':
      return h(Text, { dimColor: true, italic: true }, item.text)
    case 'call':
      return h(Text, { color: 'cyan' }, hangingText('→ ', item.text, 2, width))
    case 'result':
      return h(Text, { color: 'green' }, hangingText('← ', item.text, 2, width))
    case 'error':
      return h(Text, { color: 'red' }, hangingText('← ', item.text, 2, width))
    case 'refused':
      return h(Text, { color: 'red' }, hangingText('  ', item.text, 4, width))
    case 'output':
      return h(Text, { dimColor: true }, item.text)
    case 'notice':
      return h(Text, { color: 'yellow' }, hangingText('· ', item.text, 2, width))
    case 'todo':
      return h(Box, { flexDirection: 'column' }, h(Text, { bold: true }, 'todo'), h(Text, null, item.text))
    default:
      return h(Text, { dimColor: true }, wrapEachLine(item.text, 2, width))
  }
}

/**
 * The transcript, printed once above the live region (Ink's Static). Its key is the feed's
 * epoch: after a resize it is mounted again and every entry is printed at the new width.
 */
export function HistoryView({
  items,
  width,
  epoch,
}: {
  items: readonly HistoryItem[]
  width: number
  epoch: number
}): ReactElement {
  const props: { items: HistoryItem[]; children: (item: HistoryItem) => ReactElement } = {
    items: [...items],
    children: (item) => h(Item, { key: item.id, item, width }),
  }
  return h(Static as unknown as (p: typeof props) => ReactElement, { key: `history-${epoch}`, ...props })
}

const DIFF_COLORS: Record<DiffLine['kind'], string | undefined> = {
  add: 'green',
  del: 'red',
  hunk: 'cyan',
  context: undefined,
  note: 'gray',
}

/** The diff lines of an approval, at most `max` (the live region must stay shorter than the screen). */
function diffView(lines: readonly DiffLine[], max: number, width: number): ReactElement[] {
  const shown = lines.slice(0, max).map((line, i) =>
    h(
      Text,
      {
        key: `d${i}`,
        wrap: 'truncate-end',
        ...(DIFF_COLORS[line.kind] ? { color: DIFF_COLORS[line.kind] } : {}),
      },
      printable(line.text).slice(0, width),
    ),
  )
  if (lines.length > max)
    shown.push(h(Text, { key: 'dmore', dimColor: true }, `… ${lines.length - max} more diff lines`))
  return shown
}

/**
 * An approval question: what wants to run (the command, or the diff of an edit), why it is
 * asked, and the keys — the same `y` / `a` / `n` as one-shot mode, `a` naming its scope.
 */
export function ApprovalView({
  pending,
  reason,
  rows,
  width,
}: {
  pending: PendingApproval
  /** The reason being typed after `n`, with the cursor; undefined before. */
  reason: string | undefined
  rows: number
  width: number
}): ReactElement {
  const q = pending.question
  // inside the border and its padding
  const inner = Math.max(20, width - 4)
  const command = q.info.facts.command
  const change = pending.change
  const what =
    command !== undefined
      ? h(Text, { bold: true }, printable(command))
      : typeof change === 'object'
        ? h(Text, { bold: true }, printable(changeSummary(change)))
        : h(Text, null, printable(summarizeArguments(JSON.stringify(q.input ?? {}), 160)))
  return h(
    Box,
    { flexDirection: 'column', borderStyle: 'round', borderColor: 'yellow', paddingX: 1 },
    h(
      Text,
      { bold: true, color: 'yellow' },
      `Allow ${q.toolName}${q.delegate ? ` for subagent ${q.delegate.agent}` : ''}?`,
    ),
    what,
    ...(typeof change === 'object' ? diffView(change.lines, Math.max(4, rows - 16), width - 6) : []),
    ...(typeof change === 'string' ? [h(Text, { key: 'noddiff', dimColor: true }, change)] : []),
    h(Text, { dimColor: true }, hangingText('why: ', printable(q.reason), 5, inner)),
    reason !== undefined
      ? h(Text, null, `reason for rejecting (Enter sends, Esc goes back): ${reason}`)
      : h(Text, null, hang('', approvalKeys(q.rule, 'keys').map(printable), LEGEND_GAP, 0, inner)),
  )
}
