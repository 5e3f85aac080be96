import { type Agent, enqueueMessage, pendingMessages, withdrawMessage } from '@keel/agent'
import { errorMessage } from '@keel/base'
import type { PriceTable, UserMessage } from '@keel/llm'
import type { PresetAgent } from '@keel/presets'
import { render } from 'ink'
import { createElement as h } from 'react'
import type { DeferredSession } from '../deferred-session.js'
import { EXIT, interruptExitCode } from '../exit-codes.js'
import type { Terminal } from '../io.js'
import { App, type AppActions } from './app.js'
import type { Feed } from './feed.js'
import { InputHistory } from './history.js'
import { attachMentions, completePath, mentionAt, typedPart } from './mentions.js'
import { colorless } from './no-color.js'
import { runSlash, slashNames } from './slash.js'
import { transcriptOf } from './transcript.js'

/** What {@link runInteractive} drives. */
export { Feed } from './feed.js'

export interface InteractiveOptions {
  readonly agent: Agent
  readonly built: PresetAgent
  readonly feed: Feed
  readonly terminal: Terminal
  /** Paint in colour; without it (NO_COLOR) colours are stripped, bold, dim and the inverse cursor stay. */
  readonly color: boolean
  /** Lines shown first (session, model, preset, notices). */
  readonly header: readonly string[]
  /** A resumed or forked session: its earlier conversation is shown, its queued messages wait. */
  readonly resumed: boolean
  /** SIGHUP/SIGTERM/SIGINT from outside: leave with the signal's code. */
  readonly signal?: AbortSignal
  /** A new session, stored once a prompt gets through. */
  readonly deferred?: DeferredSession
  /** `$KEEL_HOME`: the input history of each project is kept under it. */
  readonly home: string
  /** The directory the agent works in (`@path` mentions and `!cmd` are relative to it). */
  readonly cwd: string
  /** Prices by model id (the provider's, with the preset's over them). */
  readonly prices: PriceTable
}

/** What a queued message shows: the typed text (attached files named, not shown). */
const shown = (message: UserMessage) => {
  const { text, attached } = typedPart(message)
  return attached.length === 0 ? text : `${text} (attached: ${attached.join(', ')})`
}

/**
 * Interactive `keel` over Ink: one turn at a time from the input line, slash commands,
 * `!cmd` shell commands (the agent's `bash` tool, run directly), `@path` attachments,
 * approval prompts. A line typed while a turn runs is queued durably in the session's
 * inbox (`agent/inbox/spliced`) and shown as queued; queued messages run in order as turns.
 * Ctrl-C or Esc aborts only the running turn: the queue then waits (Enter runs it, ↑ takes
 * the last message back into the input line to edit). A resumed session shows its last
 * turns and its queue, waiting. A second Ctrl-C within 2 s leaves with 130; SIGHUP (the
 * terminal closed) and SIGTERM end the turn and leave with 129 / 143. Resolves with the exit code.
 */
export async function runInteractive(options: InteractiveOptions): Promise<number> {
  const { agent, built, feed, terminal, cwd } = options
  const session = agent.session
  let exitCode = 0
  let leaving = false
  let paused = false
  let running: AbortController | undefined
  /** Submissions in order: attaching files is asynchronous, the order they were typed is not. */
  let submitting: Promise<void> = Promise.resolve()
  /** Commands that have not answered yet. */
  const commands = new Set<AbortController>()
  const history = new InputHistory(options.home, cwd)
  const loaded = await history.load().catch((error: unknown) => {
    feed.add('notice', `the input history could not be read (${errorMessage(error)}); ↑ starts empty`)
    return { entries: [] as string[], skipped: 0 }
  })
  if (loaded.skipped > 0)
    feed.add(
      'notice',
      `${loaded.skipped} unreadable line${loaded.skipped === 1 ? '' : 's'} of ${history.file} skipped`,
    )
  feed.configure(options.prices, session.events)
  const queue = () => pendingMessages(session)
  const showQueue = () => feed.setQueue(queue().map(shown), paused)
  const unsubscribe = session.subscribe((event) => {
    if (event.type === 'agent/inbox/spliced') showQueue()
  })
  const settle = (work: Promise<unknown>, controller: AbortController) => {
    running = controller
    feed.busy(true)
    work
      .catch((error: unknown) => feed.add('error', errorMessage(error)))
      .finally(() => {
        running = undefined
        feed.busy(false)
        pump()
      })
  }
  const run = (message: UserMessage, fromInbox: boolean) => {
    const controller = new AbortController()
    feed.add('user', shown(message))
    settle(
      agent.send(message, { signal: controller.signal, ...(fromInbox ? { fromInbox: true } : {}) }),
      controller,
    )
  }
  /** Runs the next queued message when nothing runs and the queue does not wait. */
  const pump = () => {
    if (running || paused || leaving) return
    const next = queue()[0]
    if (next) run(next, true)
  }
  /** `!cmd`: the agent's bash tool, run directly through its permission chain and sandbox. */
  const shell = (command: string) => {
    feed.add('user', `!${command}`)
    if (!agent.tools.some((t) => t.name === 'bash')) {
      feed.add(
        'error',
        `!cmd runs the bash tool, and preset ${built.composition.preset} has none (try --preset coding)`,
      )
      return
    }
    const controller = new AbortController()
    settle(agent.runTool('bash', { command }, { signal: controller.signal, source: 'user' }), controller)
  }
  /** What was typed is on disk at once, not at the running turn's next durability point. */
  const persist = () => {
    agent.flush().catch((error: unknown) => feed.add('error', errorMessage(error)))
  }
  const send = async (line: string) => {
    const { message, notes } = await attachMentions(line, cwd)
    for (const note of notes) feed.add('notice', note)
    // Sending something is going on: a queue that waited runs again.
    paused = false
    if (running || queue().length > 0) {
      enqueueMessage(session, message)
      persist()
      showQueue()
      pump()
      return
    }
    run(message, false)
  }
  const actions: AppActions = {
    submit(line: string) {
      if (line.startsWith('/')) {
        feed.add('user', line)
        // A command is cancelled by Ctrl-C like a turn (its `command/done` then says so).
        const controller = new AbortController()
        commands.add(controller)
        runSlash(line, {
          agent,
          built,
          signal: controller.signal,
          feed,
          columns: terminal.stdout.columns || 80,
        })
          .then((text) => feed.add('info', text))
          .catch((error: unknown) => feed.add('error', errorMessage(error)))
          .finally(() => commands.delete(controller))
        return
      }
      if (line.startsWith('!')) {
        const command = line.slice(1).trim()
        if (command !== '') submitting = submitting.then(() => shell(command))
        return
      }
      submitting = submitting
        .then(() => send(line))
        .catch((error: unknown) => feed.add('error', errorMessage(error)))
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
      return typedPart(message).text
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
    async complete(text: string, cursor: number) {
      const mention = mentionAt(text, cursor)
      if (mention) return { start: mention.start, candidates: await completePath(cwd, mention.partial) }
      const slash = /^\/[a-z0-9-]*$/u.exec(text.slice(0, cursor))
      if (slash) {
        const typed = slash[0].slice(1)
        return { start: 1, candidates: slashNames(agent).filter((n) => n.startsWith(typed)) }
      }
      return undefined
    },
    remember(line: string) {
      void history.append(line).then((failure) => {
        if (failure) feed.add('notice', failure)
      })
    },
  }
  feed.add('info', options.header.join('\n'))
  if (options.resumed) feed.addAll(transcriptOf(session.events, session.id))
  paused = queue().length > 0
  showQueue()
  feed.add(
    'info',
    `/help for commands and keys · Esc interrupts · Ctrl-C twice exits${paused ? ' · queued messages wait: Enter runs them, ↑ edits the last' : ''}`,
  )
  const instance = render(
    h(App, {
      feed,
      actions,
      info: { route: () => agent.model(), history: loaded.entries },
    }),
    {
      stdin: terminal.stdin,
      stdout: options.color ? terminal.stdout : colorless(terminal.stdout),
      stderr: options.color ? terminal.stderr : colorless(terminal.stderr),
      exitOnCtrlC: false,
      patchConsole: false,
    },
  )
  // After a resize the terminal has rewrapped what is on screen at the old width: clear it
  // and print the transcript again, so no line keeps the old width (as Gemini CLI does).
  let lastColumns = terminal.stdout.columns
  const onResize = () => {
    if (terminal.stdout.columns === lastColumns) return
    lastColumns = terminal.stdout.columns
    instance.clear()
    terminal.stdout.write('\x1b[2J\x1b[3J\x1b[H')
    feed.reprint()
  }
  terminal.stdout.on('resize', onResize)
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
    terminal.stdout.off('resize', onResize)
  }
  await submitting
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
