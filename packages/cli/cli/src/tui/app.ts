import { Box, Text, useApp } from 'ink'
import {
  createElement as h,
  type ReactElement,
  useEffect,
  useReducer,
  useRef,
  useState,
  useSyncExternalStore,
} from 'react'
import { summarizeArguments } from '../render.js'
import type { Feed } from './feed.js'
import { type KeyEvent, useKeys } from './keys.js'
import { type Key, LineEditor } from './line-editor.js'
import { closeOpenFence, renderMarkdown } from './markdown.js'
import { commonPrefix } from './mentions.js'
import { useTerminalSize } from './size.js'
import { footerText, PromptView, queuedLines, Spinner } from './status.js'
import { ApprovalView, HistoryView } from './views.js'

/** Lines of streaming text and reasoning kept in the live region (the rest is in the history once committed). */
const LIVE_LINES = 8
/** How long a first Ctrl-C keeps the exit armed. */
export const EXIT_ARM_MS = 2000
/** Completions listed under the input line. */
const COMPLETIONS_SHOWN = 8
/** The hint Esc shows while the running turn winds down. */
const INTERRUPTING = 'interrupting…'

/** What the app asks of its host. */
export interface AppActions {
  /** A line the person submitted (a task, a slash command, a `!` shell command). */
  submit(line: string): void
  /** Enter on an empty line: a queue that waits runs. */
  resume(): void
  /** ↑ on an empty line: the last queued message, taken out of the queue to be edited. */
  editLast(): string | undefined
  /** Ctrl-C or Esc while a turn runs. */
  interrupt(): void
  /** Leave with this exit code. */
  exit(code: number): void
  /** Tab: what completes the input before the cursor (`@path`, `/command`), and where it starts. */
  complete(text: string, cursor: number): Promise<{ start: number; candidates: string[] } | undefined>
  /** An entry for the input history (persisted per project). */
  remember(line: string): void
}

/** What the footer shows besides the feed's usage. */
export interface AppInfo {
  /** The model of the next request and its window (a `/model` switch, a resumed selection). */
  route(): { readonly model: string; readonly contextWindow?: number | undefined }
  /** Earlier inputs of this project, newest first (↑ walks them). */
  readonly history: readonly string[]
}

const tail = (text: string, lines: number) => text.split('\n').slice(-lines).join('\n')

/** The interactive screen: history (static), live streaming, approval, input line, footer. */
export function App({
  feed,
  actions,
  info,
}: {
  feed: Feed
  actions: AppActions
  info: AppInfo
}): ReactElement {
  const state = useSyncExternalStore(
    (listener) => feed.subscribe(listener),
    () => feed.state,
  )
  const { columns, rows } = useTerminalSize()
  const editor = useRef<LineEditor>(undefined as unknown as LineEditor)
  if (!editor.current) editor.current = new LineEditor({ history: info.history })
  const reasonEditor = useRef<LineEditor | undefined>(undefined)
  const [, redraw] = useReducer((n: number) => n + 1, 0)
  const [armed, setArmed] = useState(false)
  const armedRef = useRef(false)
  const armTimer = useRef<NodeJS.Timeout | undefined>(undefined)
  const [hint, setHint] = useState<string | undefined>(undefined)
  const [completions, setCompletions] = useState<readonly string[]>([])
  const app = useApp()
  const busy = state.busySince !== undefined
  const busyRef = useRef(busy)
  busyRef.current = busy
  const approvalRef = useRef(state.approval)
  approvalRef.current = state.approval
  useEffect(() => () => editor.current.close(), [])
  useEffect(() => () => clearTimeout(armTimer.current), [])
  // once the turn has ended, "interrupting…" is no longer true
  useEffect(() => {
    if (!busy) setHint((shown) => (shown === INTERRUPTING ? undefined : shown))
  }, [busy])

  const arm = (on: boolean) => {
    armedRef.current = on
    setArmed(on)
    clearTimeout(armTimer.current)
    if (on) armTimer.current = setTimeout(() => arm(false), EXIT_ARM_MS)
  }
  const leave = (code: number) => {
    actions.exit(code)
    app.exit()
  }
  /** Ctrl-C: interrupt a running turn (or clear the line) and arm; armed, leave with 130. */
  const ctrlC = () => {
    if (armedRef.current) return leave(130)
    arm(true)
    if (busyRef.current) actions.interrupt()
    else editor.current.set('')
  }
  const submit = () => {
    const line = editor.current.text
    if (line.trim() === '') {
      editor.current.set('')
      actions.resume()
      return
    }
    if (line.startsWith('!') && busyRef.current) {
      setHint('a shell command runs between turns: wait for this one to end (Esc interrupts it)')
      return
    }
    const taken = editor.current.submit()
    actions.remember(taken)
    const trimmed = taken.trim()
    if (trimmed === '/exit' || trimmed === '/quit') leave(0)
    else actions.submit(trimmed)
  }
  const tab = () => {
    const { text, cursor } = editor.current
    void actions.complete(text, cursor).then((found) => {
      if (!found || editor.current.text !== text || editor.current.cursor !== cursor) return
      const typed = text.slice(found.start, cursor)
      const { candidates } = found
      if (candidates.length === 0) return setHint(`nothing to complete for ${typed || 'that'}`)
      const prefix = commonPrefix(candidates)
      const single = candidates.length === 1
      const insert = prefix.slice(typed.length) + (single && !prefix.endsWith('/') ? ' ' : '')
      if (insert !== '') editor.current.insert(insert)
      setCompletions(single ? [] : candidates)
      redraw()
    })
  }
  const approvalKey = (text: string, key: Key) => {
    const pending = approvalRef.current!
    const reason = reasonEditor.current
    if (reason) {
      if (key.name === 'return') {
        pending.answer({ outcome: 'reject', reason: reason.text.trim() || 'rejected by the user' })
        reasonEditor.current = undefined
      } else if (key.name === 'escape') reasonEditor.current = undefined
      else reason.key(text, key)
      return redraw()
    }
    const letter = key.ctrl || key.meta ? '' : text.toLowerCase()
    if (letter === 'y') pending.answer({ outcome: 'allow-once' })
    else if (letter === 'a') pending.answer({ outcome: 'allow-session' })
    else if (letter === 'n') {
      reasonEditor.current = new LineEditor()
      redraw()
    } else if (key.name === 'escape') pending.answer({ outcome: 'reject', reason: 'rejected by the user' })
  }
  const onKey = (event: KeyEvent) => {
    const ed = editor.current
    if (event.kind === 'paste') {
      ;(approvalRef.current ? reasonEditor.current : ed)?.insert(event.text)
      return redraw()
    }
    const { text, key } = event
    if (key.ctrl && key.name === 'c') return ctrlC()
    if (armedRef.current) arm(false)
    setHint(undefined)
    if (key.name !== 'tab') setCompletions([])
    if (approvalRef.current) return approvalKey(text, key)
    if (key.name === 'escape') {
      if (busyRef.current) {
        actions.interrupt()
        setHint(INTERRUPTING)
      }
      return
    }
    if (key.ctrl && key.name === 'd' && ed.text === '') {
      if (!busyRef.current) leave(0)
      return
    }
    if (key.ctrl && key.name === 'o') {
      if (!feed.expandLast()) setHint('no tool output to show yet')
      return
    }
    if (key.name === 'tab') return tab()
    if (key.name === 'return') {
      if (key.meta) ed.insert('\n')
      else if (ed.continues) ed.continueLine()
      else submit()
      return redraw()
    }
    if (key.name === 'enter')
      ed.insert('\n') // Ctrl-J
    else if (key.name === 'up' && ed.text === '' && state.queued.length > 0) {
      const taken = actions.editLast()
      if (taken !== undefined) ed.set(taken)
    } else ed.key(text, key)
    redraw()
  }
  const listening = useKeys(onKey)

  const calls = state.calls.filter((c) => c.name !== '')
  const live = state.text === '' ? '' : tail(renderMarkdown(closeOpenFence(state.text), columns), LIVE_LINES)
  return h(
    Box,
    { flexDirection: 'column' },
    h(HistoryView, { items: state.history, width: columns, epoch: state.epoch }),
    state.reasoning !== ''
      ? h(Text, { dimColor: true, italic: true }, tail(state.reasoning, LIVE_LINES))
      : null,
    live !== '' ? h(Text, null, live) : null,
    ...calls.map((c, i) =>
      h(
        Text,
        { key: `call-${i}`, color: 'cyan', dimColor: true },
        `→ ${c.name} ${summarizeArguments(c.args, 100)}`,
      ),
    ),
    state.approval
      ? h(ApprovalView, {
          key: state.approval.question.id,
          pending: state.approval,
          reason: reasonEditor.current?.text,
          rows,
          width: columns,
        })
      : null,
    busy ? h(Spinner, { since: state.busySince!, waiting: state.approval !== undefined }) : null,
    ...queuedLines(state.queued, state.paused, busy, listening),
    armed
      ? h(
          Text,
          { color: 'yellow' },
          `${busy ? 'interrupting… ' : ''}press Ctrl-C again within ${EXIT_ARM_MS / 1000} s to exit`,
        )
      : null,
    hint ? h(Text, { color: 'yellow' }, hint) : null,
    completions.length > 0
      ? h(
          Text,
          { dimColor: true },
          `${completions.slice(0, COMPLETIONS_SHOWN).join('  ')}${completions.length > COMPLETIONS_SHOWN ? `  … ${completions.length - COMPLETIONS_SHOWN} more` : ''}`,
        )
      : null,
    listening
      ? h(PromptView, { text: editor.current.text, cursor: editor.current.cursor, busy })
      : h(Text, { dimColor: true }, '  starting…'),
    h(
      Text,
      { dimColor: true, wrap: 'truncate-end' },
      footerText(state.usage, info.route().contextWindow, info.route().model),
    ),
  )
}
