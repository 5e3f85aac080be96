import type { AgentObserver, ApprovalAnswer, ApprovalAnswerer, ApprovalQuestion } from '@keel/agent'
import { oneLine, summarizeArguments, summarizeResult } from '../render.js'

/** One finished line of the transcript (printed once, above the live region). */
export interface HistoryItem {
  readonly id: number
  readonly kind: 'user' | 'assistant' | 'reasoning' | 'call' | 'result' | 'error' | 'notice' | 'todo' | 'info'
  readonly text: string
}

/** A tool call the model is streaming: its name and the arguments so far. */
export interface StreamingCall {
  name: string
  args: string
}

/** An approval question waiting for the person. */
export interface PendingApproval {
  readonly question: ApprovalQuestion
  answer(answer: ApprovalAnswer): void
}

/** What the interactive UI shows; replaced (never mutated) on each change. */
export interface FeedState {
  readonly history: readonly HistoryItem[]
  readonly text: string
  readonly reasoning: string
  readonly calls: readonly StreamingCall[]
  readonly busySince: number | undefined
  readonly approval: PendingApproval | undefined
  readonly todo: string | undefined
  /** Messages typed while a turn ran, waiting in the session's inbox, oldest first. */
  readonly queued: readonly string[]
  /** The queue waits for the person (after Ctrl-C, or restored on resume) instead of running. */
  readonly paused: boolean
}

const empty: FeedState = {
  history: [],
  text: '',
  reasoning: '',
  calls: [],
  busySince: undefined,
  approval: undefined,
  todo: undefined,
  queued: [],
  paused: false,
}

/**
 * The state of an interactive session, fed by an agent observer and an interactive
 * approval answerer, read by the Ink app through {@link Feed.subscribe}. Streaming text and
 * reasoning stay live until the step's message is committed, then move to the history.
 */
export class Feed {
  #state: FeedState = empty
  #next = 0
  readonly #listeners = new Set<() => void>()

  get state(): FeedState {
    return this.#state
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  #set(patch: Partial<FeedState>): void {
    this.#state = { ...this.#state, ...patch }
    for (const listener of this.#listeners) listener()
  }

  /** Adds a finished line to the transcript. */
  add(kind: HistoryItem['kind'], text: string): void {
    this.#set({ history: [...this.#state.history, { id: this.#next++, kind, text }] })
  }

  /** Adds finished lines at once (an earlier conversation on resume). */
  addAll(lines: ReadonlyArray<Pick<HistoryItem, 'kind' | 'text'>>): void {
    const items = lines.map((line) => ({ id: this.#next++, kind: line.kind, text: line.text }))
    this.#set({ history: [...this.#state.history, ...items] })
  }

  /** Shows the queued messages and whether they wait for the person. */
  setQueue(queued: readonly string[], paused: boolean): void {
    this.#set({ queued, paused: paused && queued.length > 0 })
  }

  /** Marks a turn as running (spinner and elapsed time) or done. */
  busy(running: boolean): void {
    if (running && this.#state.busySince !== undefined) return
    this.#set({ busySince: running ? Date.now() : undefined })
  }

  #flushStreaming(): void {
    const items: HistoryItem[] = []
    if (this.#state.reasoning.trim() !== '')
      items.push({ id: this.#next++, kind: 'reasoning', text: this.#state.reasoning.trim() })
    if (this.#state.text.trim() !== '')
      items.push({ id: this.#next++, kind: 'assistant', text: this.#state.text.trim() })
    this.#set({ history: [...this.#state.history, ...items], text: '', reasoning: '', calls: [] })
  }

  /** The observer the agent reports to. */
  readonly observer: AgentObserver = {
    onReasoningDelta: (d) => this.#set({ reasoning: this.#state.reasoning + d.text }),
    onTextDelta: (d) => this.#set({ text: this.#state.text + d.text }),
    onToolCallDelta: (d) => {
      const calls = [...this.#state.calls]
      const current = calls[d.index] ?? { name: '', args: '' }
      calls[d.index] = { name: d.name ?? current.name, args: current.args + d.argumentsDelta }
      this.#set({ calls })
    },
    onEvent: (event) => {
      if (event.type === 'assistant/message') {
        this.#flushStreaming()
        if (event.data.interrupted) this.add('notice', 'interrupted: the delivered prefix was kept')
      } else if (event.type === 'turn/end') {
        this.#flushStreaming()
        const error = event.data.error
          ? `: ${event.data.error.code} ${oneLine(event.data.error.message, 160)}`
          : ''
        if (event.data.reason !== 'completed')
          this.add('notice', `turn ${event.data.turn} ${event.data.reason}${error}`)
      } else if (event.type === 'approval/decided') {
        this.add(
          'info',
          `approval: ${event.data.outcome}${event.data.reason ? ` (${oneLine(event.data.reason, 80)})` : ''}`,
        )
      }
    },
    onToolCallStarted: (info) =>
      this.add('call', `${info.call.name} ${summarizeArguments(info.call.arguments, 120)}`),
    onToolCallFinished: (info) => {
      const summary = summarizeResult(info.result, 120)
      if (info.errorCode) this.add('error', `${info.call.name} ✗ ${info.errorCode}: ${summary}`)
      else this.add('result', `${info.call.name} ✓ ${summary}`)
    },
    onRetry: (n) =>
      this.add('notice', `model call failed (${n.error.code}); retry ${n.attempt} in ${n.delayMs} ms`),
    onDisplay: (n) => {
      if (n.kind === 'todo-list') {
        this.#set({ todo: n.text })
        this.add('todo', n.text)
      } else this.add('notice', `[${n.source}] ${n.text}`)
    },
  }

  /** The interactive approval answerer: shows the question and waits for the person (or the turn's abort). */
  readonly answerer: ApprovalAnswerer = {
    name: 'keel-terminal',
    kind: 'interactive',
    answer: (question) =>
      new Promise<ApprovalAnswer | undefined>((resolve) => {
        const done = (answer: ApprovalAnswer | undefined) => {
          question.signal.removeEventListener('abort', onAbort)
          this.#set({ approval: undefined })
          resolve(answer)
        }
        const onAbort = () => done({ outcome: 'reject', reason: 'the turn was interrupted' })
        question.signal.addEventListener('abort', onAbort, { once: true })
        this.#set({ approval: { question, answer: done } })
      }),
  }
}
