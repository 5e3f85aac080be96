import { type Agent, enqueueMessage, pendingMessages, withdrawMessage } from '@keel/agent'
import { errorMessage } from '@keel/base'
import type { UserMessage } from '@keel/llm'
import type { PresetAgent } from '@keel/presets'
import { render } from 'ink'
import { createElement as h } from 'react'
import type { DeferredSession } from '../deferred-session.js'
import { EXIT, interruptExitCode } from '../exit-codes.js'
import type { Terminal } from '../io.js'
import { App, type AppActions } from './app.js'
import type { Feed } from './feed.js'
import { runSlash } from './slash.js'
import { transcriptOf } from './transcript.js'

/** What {@link runInteractive} drives. */
export interface InteractiveOptions {
  readonly agent: Agent
  readonly built: PresetAgent
  readonly feed: Feed
  readonly terminal: Terminal
  /** Lines shown first (session, model, preset, notices). */
  readonly header: readonly string[]
  /** A resumed or forked session: its earlier conversation is shown, its queued messages wait. */
  readonly resumed: boolean
  /** SIGHUP/SIGTERM/SIGINT from outside: leave with the signal's code. */
  readonly signal?: AbortSignal
  /** A new session, stored once a prompt gets through. */
  readonly deferred?: DeferredSession
}

const textOf = (message: UserMessage) =>
  message.content.map((b) => (b.type === 'text' ? b.text : '[image]')).join('')

/**
 * Interactive `keel` over Ink: one turn at a time from the input line, slash commands,
 * approval prompts. A line typed while a turn runs is queued durably in the session's
 * inbox (`agent/inbox/spliced`) and shown as queued; queued messages run in order as turns.
 * Ctrl-C aborts only the running turn: the queue then waits (Enter runs it, ↑ takes the
 * last message back into the input line to edit). A resumed session shows its last turns
 * and its queue, waiting. A second Ctrl-C leaves with 130; SIGHUP (the terminal closed)
 * and SIGTERM end the turn and leave with 129 / 143. Resolves with the exit code.
 */
export async function runInteractive(options: InteractiveOptions): Promise<number> {
  const { agent, built, feed, terminal } = options
  const session = agent.session
  let exitCode = 0
  let leaving = false
  let paused = false
  let running: AbortController | undefined
  /** Commands that have not answered yet. */
  const commands = new Set<AbortController>()
  const queue = () => pendingMessages(session)
  const showQueue = () => feed.setQueue(queue().map(textOf), paused)
  const unsubscribe = session.subscribe((event) => {
    if (event.type === 'agent/inbox/spliced') showQueue()
  })
  const run = (message: string | UserMessage, fromInbox: boolean) => {
    const controller = new AbortController()
    running = controller
    feed.add('user', typeof message === 'string' ? message : textOf(message))
    feed.busy(true)
    agent
      .send(message, { signal: controller.signal, ...(fromInbox ? { fromInbox: true } : {}) })
      .catch((error: unknown) => feed.add('error', errorMessage(error)))
      .finally(() => {
        running = undefined
        feed.busy(false)
        pump()
      })
  }
  /** What was typed is on disk at once, not at the running turn's next durability point. */
  const persist = () => {
    agent.flush().catch((error: unknown) => feed.add('error', errorMessage(error)))
  }
  /** Runs the next queued message when nothing runs and the queue does not wait. */
  const pump = () => {
    if (running || paused || leaving) return
    const next = queue()[0]
    if (next) run(next, true)
  }
  const actions: AppActions = {
    submit(line: string) {
      if (line.startsWith('/')) {
        feed.add('user', line)
        // A command is cancelled by Ctrl-C like a turn (its `command/done` then says so).
        const controller = new AbortController()
        commands.add(controller)
        runSlash(line, { agent, built, signal: controller.signal })
          .then((text) => feed.add('info', text))
          .catch((error: unknown) => feed.add('error', errorMessage(error)))
          .finally(() => commands.delete(controller))
        return
      }
      // Sending something is going on: a queue that waited runs again.
      paused = false
      if (running || queue().length > 0) {
        enqueueMessage(session, line)
        persist()
        showQueue()
        pump()
        return
      }
      run(line, false)
    },
    resume() {
      if (!paused) return
      paused = false
      showQueue()
      pump()
    },
    editLast() {
      const pending = queue()
      if (pending.length === 0) return undefined
      const message = withdrawMessage(session, pending.length - 1)
      persist()
      if (pending.length === 1) paused = false
      showQueue()
      return textOf(message)
    },
    interrupt() {
      for (const command of commands) command.abort()
      if (!running) return
      if (queue().length > 0) {
        paused = true
        showQueue()
      }
      running.abort()
    },
    exit(code: number) {
      exitCode = code
      leaving = true
      running?.abort()
      for (const command of commands) command.abort()
    },
  }
  feed.add('info', options.header.join('\n'))
  if (options.resumed) feed.addAll(transcriptOf(session.events, session.id))
  paused = queue().length > 0
  showQueue()
  feed.add(
    'info',
    `/help for commands · Ctrl-C interrupts, twice exits${paused ? ' · queued messages wait: Enter runs them, ↑ edits the last' : ''}`,
  )
  const instance = render(h(App, { feed, actions }), {
    stdin: terminal.stdin,
    stdout: terminal.stdout,
    stderr: terminal.stderr,
    exitOnCtrlC: false,
    patchConsole: false,
  })
  const onSignal = () => {
    actions.exit(interruptExitCode(options.signal) ?? EXIT.interrupted)
    instance.unmount()
  }
  if (options.signal?.aborted) onSignal()
  else options.signal?.addEventListener('abort', onSignal, { once: true })
  try {
    await instance.waitUntilExit()
  } finally {
    options.signal?.removeEventListener('abort', onSignal)
  }
  await agent.idle().catch(() => undefined)
  unsubscribe()
  const left = queue().length
  if (left > 0)
    terminal.stderr.write(
      `keel: ${left} queued message${left === 1 ? ' is' : 's are'} kept in session ${session.id}; keel resume ${session.id} shows ${left === 1 ? 'it' : 'them'}\n`,
    )
  if (
    options.deferred &&
    !options.deferred.stored &&
    session.events.every((e) => e.type !== 'user/message')
  ) {
    terminal.stderr.write('keel: nothing was stored (no prompt was sent)\n')
  } else terminal.stderr.write(`keel: session ${session.id} (keel resume ${session.id})\n`)
  return exitCode
}
