import { type Agent, enqueueMessage, pendingMessages, type TurnResult } from '@keel/agent'
import { errorMessage, errorRecordOf } from '@keel/base'
import type { UserMessage } from '@keel/llm'
import type { DeferredSession } from './deferred-session.js'
import { EXIT, interruptExitCode, interruptSignal } from './exit-codes.js'
import { parseInputLine, readInputLines, userMessageOf } from './input-lines.js'
import type { CliIo } from './io.js'
import { jsonLine, resultObject } from './json-output.js'
import { closeRun, sayWhereStored } from './one-shot.js'
import type { PriceTable } from './pricing.js'
import { oneLine } from './render.js'

/** What `keel -p --input-format stream-json` needs besides the agent. */
export interface InputStreamRun {
  readonly agent: Agent
  readonly io: CliIo
  /** The JSON lines. */
  readonly stdin: NodeJS.ReadableStream
  readonly started: number
  readonly prices: PriceTable
  readonly deferred?: DeferredSession
  closeStore(): Promise<void>
}

/**
 * Runs the user messages a driving program writes to stdin, one JSON line each, as turns
 * in order, writing a `result` line after each turn. A message that arrives while a turn runs
 * waits in the session's inbox (`agent/inbox/spliced`), so it is in the log even if the run
 * is killed; an `interrupt` line ends the running turn (queued messages still run). The end
 * of stdin ends the run once every accepted message has run. A line that is not an input
 * line is one `INPUT_LINE_INVALID` on stderr naming `stdin:<n>`: nothing after it is read,
 * what was accepted still runs, and the exit code is 2. SIGINT/SIGTERM/SIGHUP end the
 * running turn (queued messages stay in the inbox for `keel resume`) and exit 130/143/129.
 */
export async function runInputStream(run: InputStreamRun): Promise<number> {
  const { agent, io } = run
  const session = agent.session
  let running: AbortController | undefined
  let first = true
  let failedTurns = 0
  let badInput = false
  let inputEnded = false
  let finish: () => void = () => {}
  const finished = new Promise<void>((resolve) => {
    finish = resolve
  })
  const stopped = () => io.signal?.aborted === true
  const settleIfDone = () => {
    if (running === undefined && (stopped() || (inputEnded && pendingMessages(session).length === 0)))
      finish()
  }

  const runTurn = async (message: UserMessage, fromInbox: boolean) => {
    const controller = new AbortController()
    running = controller
    const onSignal = () => controller.abort(io.signal?.reason)
    io.signal?.addEventListener('abort', onSignal, { once: true })
    const before = session.events.length
    const started = first ? run.started : Date.now()
    first = false
    let result: TurnResult | undefined
    let failure: { code: string; message: string } | undefined
    try {
      result = await agent.send(message, {
        signal: controller.signal,
        ...(fromInbox ? { fromInbox: true } : {}),
      })
    } catch (error) {
      failure = errorRecordOf(error, 'INTERNAL')
    } finally {
      io.signal?.removeEventListener('abort', onSignal)
      running = undefined
    }
    const interrupted = interruptSignal(io.signal)
    if (failure || result?.reason !== 'completed') failedTurns++
    io.out(
      jsonLine(
        resultObject({
          sessionId: session.id,
          result,
          events: session.events.slice(before),
          durationMs: Date.now() - started,
          prices: run.prices,
          ...(failure ? { failure } : {}),
          ...(interrupted ? { interrupted } : {}),
        }),
      ),
    )
    if (failure) io.err(`keel: ${failure.code}: ${oneLine(failure.message, 400)}\n`)
  }

  /** Runs queued messages one after another while nothing runs and no signal came. */
  const pump = async () => {
    while (running === undefined && !stopped()) {
      const next = pendingMessages(session)[0]
      if (next === undefined) break
      await runTurn(next, true)
    }
    settleIfDone()
  }

  const accept = (message: UserMessage) => {
    if (running === undefined && pendingMessages(session).length === 0) {
      void runTurn(message, false).then(pump)
      return
    }
    enqueueMessage(session, message)
  }

  const reader = readInputLines(
    run.stdin,
    (text, number) => {
      if (stopped()) return
      try {
        const line = parseInputLine(text, number)
        if (line.type === 'interrupt') running?.abort({ reason: 'interrupt line' })
        else accept(userMessageOf(line, number))
      } catch (error) {
        badInput = true
        io.err(`keel: ${errorRecordOf(error, 'INPUT_LINE_INVALID').code}: ${errorMessage(error)}\n`)
        reader.stop()
        inputEnded = true
        settleIfDone()
      }
    },
    (error) => {
      if (error) {
        badInput = true
        io.err(`keel: ${errorRecordOf(error, 'INPUT_READ_FAILED').code}: ${errorMessage(error)}\n`)
      }
      inputEnded = true
      settleIfDone()
    },
  )
  const onSignal = () => {
    reader.stop()
    settleIfDone()
  }
  io.signal?.addEventListener('abort', onSignal, { once: true })
  await finished
  io.signal?.removeEventListener('abort', onSignal)

  const closeFailure = await closeRun(agent, run.closeStore)
  const interruptedBy = interruptSignal(io.signal)
  if (interruptedBy) io.err(`keel: interrupted by ${interruptedBy}; the turn was ended and the log closed\n`)
  if (closeFailure) io.err(`keel: ${closeFailure.code}: ${oneLine(closeFailure.message, 400)}\n`)
  const waiting = pendingMessages(session).length
  if (waiting > 0) io.err(`keel: ${waiting} message(s) wait in the session's inbox (keel resume runs them)\n`)
  sayWhereStored(io, session.id, run.deferred)
  return (
    interruptExitCode(io.signal) ??
    (badInput ? EXIT.usage : closeFailure || failedTurns > 0 ? EXIT.runtime : EXIT.ok)
  )
}
