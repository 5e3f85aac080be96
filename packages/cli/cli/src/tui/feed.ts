import type { AgentObserver, ApprovalAnswer, ApprovalAnswerer, ApprovalQuestion } from '@keel/agent'
import { errorMessage } from '@keel/base'
import type { PriceTable } from '@keel/llm'
import type { SessionEvent } from '@keel/session'
import { type ProposedChange, proposedChange } from '../approval-diff.js'
import { isRefusal, Rejections, refusalText } from '../refusal.js'
import { oneLine, summarizeArguments } from '../render.js'
import { outcomeLine, resultText, toolOutcome } from '../result-view.js'
import { type SessionUsage, sessionUsage } from '../session-usage.js'
import { safeSplit } from './markdown.js'
import { userLine } from './transcript.js'

/** One finished entry of the transcript (printed once, above the live region). */
export interface HistoryItem {
  readonly id: number
  readonly kind:
    | 'user'
    | 'assistant'
    | 'reasoning'
    | 'call'
    | 'result'
    | 'error'
    | 'refused'
    | 'output'
    | 'notice'
    | 'todo'
    | 'info'
  readonly text: string
}

/** A tool call the model is streaming: its name and the arguments so far. */
export interface StreamingCall {
  name: string
  args: string
}

/** An approval question waiting for the person, with the diff of the edit it would make. */
export interface PendingApproval {
  readonly question: ApprovalQuestion
  /** The diff of an `edit_file` / `write_file` call, or why it could not be made. */
  readonly change: ProposedChange | string | undefined
  answer(answer: ApprovalAnswer): void
}

/** The last tool output, which Ctrl-O prints in full. */
export interface LastOutput {
  readonly title: string
  readonly text: string
  readonly lines: number
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
  readonly lastOutput: LastOutput | undefined
  /** Tokens and cost of the session's model calls so far. */
  readonly usage: SessionUsage
  /** Bumped when the whole transcript must be printed again (the terminal was resized). */
  readonly epoch: number
}

/** Lines of a direct run's (`!cmd`) output shown at once; Ctrl-O shows the rest. */
export const DIRECT_OUTPUT_LINES = 20

const countLines = (text: string) => (text === '' ? 0 : text.replace(/\n$/u, '').split('\n').length)

/**
 * The state of an interactive session, fed by an agent observer and an interactive
 * approval answerer, read by the Ink app through {@link Feed.subscribe}. Streaming text is
 * moved into the history block by block (at each blank line outside a code fence), so only
 * the unfinished tail stays live.
 */
export class Feed {
  #next = 0
  readonly #listeners = new Set<() => void>()
  #prices: PriceTable = {}
  /** Every model call's usage so far (the footer's totals are folded from these). */
  readonly #calls: SessionEvent[] = []
  /** The words of each rejection, by call. */
  readonly #rejections = new Rejections()
  /** Calls whose `→ tool args` line is shown: they started (a refused call never does). */
  readonly #started = new Set<string>()

  #state: FeedState = {
    history: [],
    text: '',
    reasoning: '',
    calls: [],
    busySince: undefined,
    approval: undefined,
    todo: undefined,
    queued: [],
    paused: false,
    lastOutput: undefined,
    usage: sessionUsage([], {}),
    epoch: 0,
  }

  /** The prices the footer counts with, and the session's earlier model calls (a resumed session). */
  configure(prices: PriceTable, events: readonly SessionEvent[]): void {
    this.#prices = prices
    this.#calls.length = 0
    for (const event of events) if (event.type === 'assistant/message') this.#calls.push(event)
    this.#set({ usage: sessionUsage(this.#calls, this.#prices) })
  }

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

  #item(kind: HistoryItem['kind'], text: string): HistoryItem {
    return { id: this.#next++, kind, text }
  }

  /** Adds a finished line to the transcript. */
  add(kind: HistoryItem['kind'], text: string): void {
    this.#set({ history: [...this.#state.history, this.#item(kind, text)] })
  }

  /** Adds finished lines at once (an earlier conversation on resume). */
  addAll(lines: ReadonlyArray<Pick<HistoryItem, 'kind' | 'text'>>): void {
    this.#set({ history: [...this.#state.history, ...lines.map((l) => this.#item(l.kind, l.text))] })
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

  /** The transcript is printed again from the top (after a resize: no line keeps the old width). */
  reprint(): void {
    this.#set({ epoch: this.#state.epoch + 1 })
  }

  /** Ctrl-O: the last tool output in full, into the transcript. False when there is none. */
  expandLast(): boolean {
    const last = this.#state.lastOutput
    if (!last) return false
    this.#set({
      history: [...this.#state.history, this.#item('output', `${last.title}\n${last.text || '(no output)'}`)],
      lastOutput: undefined,
    })
    return true
  }

  /** Moves the finished reasoning and text (all of it, or the text's finished blocks) into the history. */
  #flushStreaming(all: boolean): void {
    const items: HistoryItem[] = []
    const { reasoning, text } = this.#state
    if (reasoning.trim() !== '') items.push(this.#item('reasoning', reasoning.trim()))
    const cut = all ? text.length : safeSplit(text)
    const done = text.slice(0, cut)
    if (done.trim() !== '') items.push(this.#item('assistant', done.replace(/\s+$/u, '')))
    if (items.length === 0 && cut === 0 && !all) return
    this.#set({
      history: [...this.#state.history, ...items],
      reasoning: '',
      text: text.slice(cut),
      ...(all ? { calls: [] } : {}),
    })
  }

  #finished(info: Parameters<NonNullable<AgentObserver['onToolCallFinished']>>[0], direct: boolean): void {
    const { call, result, errorCode, refusedBy } = info
    const full = resultText(result)
    const args = summarizeArguments(call.arguments, 120)
    const started = this.#started.delete(call.id)
    if (isRefusal(refusedBy, errorCode)) {
      // a call stopped while it ran has its line already; one refused or never run gets it now
      const items = started ? [] : [this.#item('call', `${call.name} ${args}`)]
      items.push(this.#item('refused', refusalText(call, errorCode, full, this.#rejections.of(call.id))))
      this.#set({ history: [...this.#state.history, ...items] })
      return
    }
    const outcome = toolOutcome(result, errorCode)
    const { lines } = outcome
    const first = oneLine(lines[0] ?? '(no output)', 110)
    const more =
      lines.length > 1
        ? ` (+${lines.length - 1} more line${lines.length === 2 ? '' : 's'} · Ctrl-O shows all)`
        : ''
    const items = [
      this.#item(outcome.failed ? 'error' : 'result', `${call.name} ${outcomeLine(outcome, first + more)}`),
    ]
    if (direct && lines.length > 1) {
      const shown = full.split('\n').slice(0, DIRECT_OUTPUT_LINES).join('\n')
      items.push(this.#item('output', shown))
    }
    this.#set({
      history: [...this.#state.history, ...items],
      lastOutput: {
        title: `── ${call.name} ${args} (${countLines(full)} lines) ──`,
        text: full,
        lines: countLines(full),
      },
    })
  }

  /** The observer the agent reports to. */
  readonly observer: AgentObserver = {
    onReasoningDelta: (d) => this.#set({ reasoning: this.#state.reasoning + d.text }),
    onTextDelta: (d) => {
      if (this.#state.reasoning !== '') this.#flushStreaming(false)
      this.#set({ text: this.#state.text + d.text })
      if (d.text.includes('\n')) this.#flushStreaming(false)
    },
    onToolCallDelta: (d) => {
      const calls = [...this.#state.calls]
      const current = calls[d.index] ?? { name: '', args: '' }
      calls[d.index] = { name: d.name ?? current.name, args: current.args + d.argumentsDelta }
      this.#set({ calls })
    },
    onEvent: (event) => {
      if (event.type === 'user/message') {
        // what a person typed has its line already; a plugin's message (a schedule firing, the
        // task of /plan) is shown as the model gets it, with where it came from
        const source = event.data.source
        if (source !== undefined && !source.startsWith('direct/')) {
          this.#flushStreaming(true)
          this.add('user', userLine(event))
        }
      } else if (event.type === 'assistant/message') {
        this.#flushStreaming(true)
        this.#calls.push(event)
        this.#set({ usage: sessionUsage(this.#calls, this.#prices) })
        if (event.data.interrupted) this.add('notice', 'interrupted: the delivered prefix was kept')
      } else if (event.type === 'turn/end') {
        this.#flushStreaming(true)
        const error = event.data.error
          ? `: ${event.data.error.code} ${oneLine(event.data.error.message, 160)}`
          : ''
        if (event.data.reason !== 'completed')
          this.add('notice', `turn ${event.data.turn} ${event.data.reason}${error}`)
      } else if (event.type === 'approval/asked') {
        this.#rejections.see(event)
      } else if (event.type === 'approval/decided') {
        this.#rejections.see(event)
        const scope = event.data.rule ? ' for this session' : ''
        this.add(
          'info',
          `approval: ${event.data.outcome}${scope}${event.data.by === 'session-rule' ? ' (by a session rule)' : ''}`,
        )
      }
    },
    onToolCallStarted: (info) => {
      this.#started.add(info.call.id)
      this.add('call', `${info.call.name} ${summarizeArguments(info.call.arguments, 120)}`)
    },
    onToolCallFinished: (info) => this.#finished(info, info.call.id.startsWith('direct_')),
    onRetry: (n) =>
      this.add('notice', `model call failed (${n.error.code}); retry ${n.attempt} in ${n.delayMs} ms`),
    onDisplay: (n) => {
      if (n.kind === 'todo-list') {
        this.#set({ todo: n.text })
        this.add('todo', n.text)
      } else this.add('notice', `[${n.source}] ${n.text}`)
    },
  }

  /**
   * The interactive approval answerer: shows the question (with the diff of an edit, read
   * now) and waits for the person or the turn's abort.
   */
  readonly answerer: ApprovalAnswerer = {
    name: 'keel-terminal',
    kind: 'interactive',
    answer: async (question) => {
      const change = await proposedChange(question).catch(
        (error: unknown) => `the diff could not be made: ${errorMessage(error)}`,
      )
      return new Promise<ApprovalAnswer | undefined>((resolve) => {
        const done = (answer: ApprovalAnswer | undefined) => {
          question.signal.removeEventListener('abort', onAbort)
          this.#set({ approval: undefined })
          resolve(answer)
        }
        const onAbort = () => done({ outcome: 'reject', reason: 'the turn was interrupted' })
        if (question.signal.aborted) return onAbort()
        question.signal.addEventListener('abort', onAbort, { once: true })
        this.#set({ approval: { question, change, answer: done } })
      })
    },
  }
}
