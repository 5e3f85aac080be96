import type { Agent, AgentObserver, TurnResult } from '@keel/agent'
import { errorRecordOf } from '@keel/base'
import type { SessionEvent } from '@keel/session'
import type { DeferredSession } from './deferred-session.js'
import { EXIT, interruptExitCode, interruptSignal } from './exit-codes.js'
import type { CliIo } from './io.js'
import { jsonLine, resultObject } from './json-output.js'
import type { PriceTable } from './pricing.js'
import { oneLine, summarizeResult } from './render.js'
import type { Output } from './run.js'

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`
}

/**
 * What print mode (`-p`) says on stderr while it runs, so a script's log shows it: every
 * retry and its wait, the agent's notices, each refused tool call, and (text mode, where
 * stdout has no room for them) plugin notices.
 */
export function printModeNotices(io: Pick<CliIo, 'err'>, output: Output): AgentObserver {
  return {
    onRetry: (n) =>
      io.err(
        `keel: the model call failed (${n.error.code}: ${oneLine(n.error.message, 160)}); retrying in ${seconds(n.delayMs)}${n.retryAfterMs === undefined ? '' : ' as the server asked'} (attempt ${n.attempt + 1})\n`,
      ),
    onNotice: (n) => io.err(`keel: ${n.code}: ${oneLine(n.message, 200)}\n`),
    onToolCallFinished: (info) => {
      if (info.refusedBy === undefined) return
      io.err(`keel: refused ${info.call.name} (${info.errorCode}): ${summarizeResult(info.result, 160)}\n`)
    },
    ...(output === 'text' ? { onDisplay: (n) => io.err(`[${n.source}] ${n.text}\n`) } : {}),
  }
}

/** What a one-shot run needs besides the agent. */
export interface OneShot {
  readonly agent: Agent
  readonly io: CliIo
  readonly task: string
  /** `-p` and its output, or undefined for `keel "task"` (the conversation rendered on stdout). */
  readonly print: Output | undefined
  readonly started: number
  /** Prices for `total_cost_usd`. */
  readonly prices: PriceTable
  /** The renderer of `keel "task"` (its last line is closed after the turn). */
  readonly finish?: () => void
  /** Set for a new session: it is stored only once a prompt got through. */
  readonly deferred?: DeferredSession
  /** Closes the store after the agent. */
  closeStore(): Promise<void>
}

/**
 * Runs the task as one turn and reports it: the answer (text mode: only when the turn
 * completed), the `result` object (json, stream-json; with `permission_denials` and, after
 * SIGINT/SIGTERM/SIGHUP, `status: "interrupted"`), and on stderr how the turn ended and
 * how to resume it. The log is closed before anything is printed. Returns the exit code.
 */
export async function runOneShot(run: OneShot): Promise<number> {
  const { agent, io } = run
  const sessionId = agent.session.id
  const before = agent.session.events.length
  const info = (text: string) => io.err(`${text}\n`)
  let result: TurnResult | undefined
  let failure: { code: string; message: string } | undefined
  try {
    result = await agent.send(run.task, io.signal ? { signal: io.signal } : {})
    run.finish?.()
  } catch (error) {
    failure = errorRecordOf(error, 'INTERNAL')
  } finally {
    failure ??= await closeRun(agent, run.closeStore)
  }
  const turnEvents: readonly SessionEvent[] = agent.session.events.slice(before)
  const interruptedBy = interruptSignal(io.signal)
  if (run.print === 'json' || run.print === 'stream-json') {
    io.out(
      jsonLine(
        resultObject({
          sessionId,
          result,
          events: turnEvents,
          durationMs: Date.now() - run.started,
          prices: run.prices,
          ...(failure ? { failure } : {}),
          ...(interruptedBy ? { interrupted: interruptedBy } : {}),
        }),
      ),
    )
  } else if (run.print === 'text' && result?.reason === 'completed' && !interruptedBy) {
    if (result.text) io.out(`${result.text}\n`)
  }
  if (interruptedBy) info(`keel: interrupted by ${interruptedBy}; the turn was ended and the log closed`)
  if (failure) info(`keel: ${failure.code}: ${oneLine(failure.message, 400)}`)
  else if (result && result.reason !== 'completed' && !interruptedBy) {
    info(
      `keel: the turn ended ${result.reason}${result.error ? `: ${result.error.code}: ${oneLine(result.error.message, 400)}` : ''}`,
    )
  }
  sayWhereStored(io, sessionId, run.deferred)
  return (
    interruptExitCode(io.signal) ??
    (failure || !result ? EXIT.runtime : result.reason === 'completed' ? EXIT.ok : EXIT.runtime)
  )
}

/** Closes the agent (its log) and then the store; the close failure, if any. */
export async function closeRun(
  agent: Agent,
  closeStore: () => Promise<void>,
): Promise<{ code: string; message: string } | undefined> {
  let failure: { code: string; message: string } | undefined
  await agent.close().catch((error: unknown) => {
    failure = errorRecordOf(error, 'CLOSE_FAILED')
  })
  await closeStore()
  return failure
}

/** Says on stderr where the session is (how to resume it), or that nothing was stored. */
export function sayWhereStored(io: Pick<CliIo, 'err'>, sessionId: string, deferred?: DeferredSession): void {
  if (deferred && !deferred.stored) io.err('keel: nothing was stored (no prompt reached the model)\n')
  else io.err(`keel: session ${sessionId} (keel resume ${sessionId})\n`)
}
