import { Box, Static, Text, useApp, useInput } from 'ink'
import {
  createElement as h,
  type ReactElement,
  useEffect,
  useRef,
  useState,
  useSyncExternalStore,
} from 'react'
import { oneLine, summarizeArguments } from '../render.js'
import type { Feed, HistoryItem, PendingApproval } from './feed.js'

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏']
/** Lines of streaming text and reasoning kept in the live region (the rest is in the history once committed). */
const LIVE_LINES = 8

/** What the app asks of its host. */
export interface AppActions {
  /** A line the person submitted (a task or a slash command). */
  submit(line: string): void
  /** Enter on an empty line: a queue that waits runs. */
  resume(): void
  /** ↑ on an empty line: the last queued message, taken out of the queue to be edited. */
  editLast(): string | undefined
  /** Ctrl-C while a turn runs. */
  interrupt(): void
  /** Leave with this exit code. */
  exit(code: number): void
}

function tail(text: string, lines: number): string {
  const all = text.split('\n')
  return all.slice(-lines).join('\n')
}

function Item({ item }: { item: HistoryItem }): ReactElement {
  switch (item.kind) {
    case 'user':
      return h(Text, { color: 'cyan' }, `> ${item.text}`)
    case 'reasoning':
      return h(Text, { dimColor: true, italic: true }, item.text)
    case 'call':
      return h(Text, { color: 'cyan' }, `→ ${item.text}`)
    case 'result':
      return h(Text, { color: 'green' }, `← ${item.text}`)
    case 'error':
      return h(Text, { color: 'red' }, `← ${item.text}`)
    case 'notice':
      return h(Text, { color: 'yellow' }, `· ${item.text}`)
    case 'todo':
      return h(Box, { flexDirection: 'column' }, h(Text, { bold: true }, 'todo'), h(Text, null, item.text))
    case 'info':
      return h(Text, { dimColor: true }, item.text)
    default:
      return h(Text, null, item.text)
  }
}

function Approval({ pending }: { pending: PendingApproval }): ReactElement {
  const [reasonMode, setReasonMode] = useState(false)
  const [reason, setReason] = useState('')
  useInput((input, key) => {
    if (reasonMode) {
      if (key.return || /[\r\n]$/u.test(input)) {
        const typed = key.return ? '' : input.replace(/[\r\n]+$/u, '')
        pending.answer({ outcome: 'reject', reason: (reason + typed).trim() || 'rejected by the user' })
      } else if (key.escape) setReasonMode(false)
      else if (key.backspace || key.delete) setReason((r) => r.slice(0, -1))
      else if (!key.ctrl && !key.meta) setReason((r) => r + input)
      return
    }
    if (input === '1' || input === 'y') pending.answer({ outcome: 'allow-once' })
    else if (input === '2' || input === 'a') pending.answer({ outcome: 'allow-session' })
    else if (input === '3' || input === 'n') setReasonMode(true)
    else if (key.escape) pending.answer({ outcome: 'reject', reason: 'rejected by the user' })
  })
  const q = pending.question
  const args = summarizeArguments(JSON.stringify(q.input ?? {}), 160)
  return h(
    Box,
    { flexDirection: 'column', borderStyle: 'round', borderColor: 'yellow', paddingX: 1 },
    h(Text, { bold: true }, `Allow ${q.toolName}${q.delegate ? ` for subagent ${q.delegate.agent}` : ''}?`),
    h(Text, null, args),
    h(Text, { dimColor: true }, q.reason),
    reasonMode
      ? h(Text, null, `reason for rejecting (Enter sends, Esc goes back): ${reason}`)
      : h(
          Text,
          null,
          '[1] allow once   [2] allow for this session   [3] reject with a reason   (Esc rejects)',
        ),
  )
}

function Spinner({ since }: { since: number }): ReactElement {
  const [now, setNow] = useState(Date.now())
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 120)
    return () => clearInterval(timer)
  }, [])
  const seconds = Math.floor((now - since) / 1000)
  return h(
    Text,
    { color: 'magenta' },
    `${SPINNER[Math.floor(now / 120) % SPINNER.length]} working… ${seconds}s (Ctrl-C interrupts)`,
  )
}

/** Most queued messages listed; the rest are counted. */
const QUEUED_SHOWN = 3

/** The queue under the spinner: each message (clipped), and what the keys do with it. */
function queuedLines(queued: readonly string[], paused: boolean, busy: boolean): ReactElement[] {
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
  const hint = paused
    ? `${queued.length} queued message${queued.length === 1 ? ' waits' : 's wait'}: Enter runs ${queued.length === 1 ? 'it' : 'them'}, ↑ takes the last back to edit`
    : busy
      ? '↑ takes the last queued message back to edit'
      : ''
  if (hint !== '') lines.push(h(Text, { key: 'queued-hint', color: 'yellow' }, hint))
  return lines
}

/** Finished items, printed once above the live region (Ink's Static). */
function HistoryView({ items }: { items: HistoryItem[] }): ReactElement {
  const props: { items: HistoryItem[]; children: (item: HistoryItem) => ReactElement } = {
    items,
    children: (item) => h(Item, { key: item.id, item }),
  }
  return h(Static as unknown as (p: typeof props) => ReactElement, props)
}

/** The interactive screen: finished history (static), live streaming, approval prompt, input line. */
export function App({ feed, actions }: { feed: Feed; actions: AppActions }): ReactElement {
  const state = useSyncExternalStore(
    (listener) => feed.subscribe(listener),
    () => feed.state,
  )
  // Refs as well as state: several chunks may arrive before React renders again.
  const inputRef = useRef('')
  const [input, setInputState] = useState('')
  const setInput = (next: string | ((s: string) => string)) => {
    inputRef.current = typeof next === 'function' ? next(inputRef.current) : next
    setInputState(inputRef.current)
  }
  const armedRef = useRef(false)
  const [exitArmed, setExitArmedState] = useState(false)
  const setExitArmed = (armed: boolean) => {
    armedRef.current = armed
    setExitArmedState(armed)
  }
  const app = useApp()
  const busy = state.busySince !== undefined
  /** Ctrl-C: interrupt a running turn (or clear the line) and arm; armed, leave with 130. */
  const ctrlC = (): boolean => {
    if (armedRef.current) {
      actions.exit(130)
      app.exit()
      return true
    }
    setExitArmed(true)
    if (busy) actions.interrupt()
    else setInput('')
    return false
  }
  useInput((raw, key) => {
    if (key.ctrl && raw === 'c') {
      ctrlC()
      return
    }
    // Keys pressed faster than the terminal is read arrive as one chunk: apply Ctrl-C and
    // backspace inside it one by one.
    let chars = raw
    if (raw.length > 1 && (raw.includes('\x03') || raw.includes('\x7f') || raw.includes('\b'))) {
      chars = ''
      for (const c of raw) {
        if (c === '\x03') {
          if (ctrlC()) return
          chars = ''
        } else if (c === '\x7f' || c === '\b') {
          if (chars !== '') chars = chars.slice(0, -1)
          else setInput((s) => s.slice(0, -1))
        } else chars += c
      }
      if (chars === '') return
    }
    if (armedRef.current) setExitArmed(false)
    if (state.approval) return
    if (key.ctrl && chars === 'd' && inputRef.current === '' && !busy) {
      actions.exit(0)
      app.exit()
      return
    }
    if (key.upArrow) {
      if (inputRef.current === '') {
        const taken = actions.editLast()
        if (taken !== undefined) setInput(taken)
      }
      return
    }
    // A chunk with a newline inside is a paste: it joins the input line, newlines kept, and
    // is sent with the next Enter. A chunk of text ending in one newline is a line typed fast.
    const normalized = chars.replace(/\r\n?/gu, '\n')
    const body = normalized.endsWith('\n') ? normalized.slice(0, -1) : normalized
    if (!key.return && body.includes('\n')) {
      setInput((s) => s + normalized)
      return
    }
    if (key.return || normalized.endsWith('\n')) {
      const line = (inputRef.current + (key.return ? '' : body)).trim()
      setInput('')
      if (line === '/exit' || line === '/quit') {
        actions.exit(0)
        app.exit()
      } else if (line !== '') actions.submit(line)
      else actions.resume()
    } else if (key.backspace || key.delete) setInput((s) => s.slice(0, -1))
    else if (!key.ctrl && !key.meta && chars !== '') setInput((s) => s + chars)
  })
  const calls = state.calls.filter((c) => c.name !== '')
  return h(
    Box,
    { flexDirection: 'column' },
    h(HistoryView, { items: [...state.history] }),
    state.reasoning !== ''
      ? h(Text, { dimColor: true, italic: true }, tail(state.reasoning, LIVE_LINES))
      : null,
    state.text !== '' ? h(Text, null, tail(state.text, LIVE_LINES)) : null,
    ...calls.map((c, i) =>
      h(
        Text,
        { key: `call-${i}`, color: 'cyan', dimColor: true },
        `→ ${c.name} ${summarizeArguments(c.args, 100)}`,
      ),
    ),
    state.approval ? h(Approval, { key: state.approval.question.id, pending: state.approval }) : null,
    busy ? h(Spinner, { since: state.busySince! }) : null,
    ...queuedLines(state.queued, state.paused, busy),
    exitArmed
      ? h(
          Text,
          { color: 'yellow' },
          busy ? 'interrupting… press Ctrl-C again to exit' : 'press Ctrl-C again to exit',
        )
      : null,
    h(
      Text,
      null,
      h(Text, { color: busy ? 'gray' : 'green', bold: true }, busy ? '… ' : '› '),
      input,
      h(Text, { inverse: true }, ' '),
    ),
  )
}
