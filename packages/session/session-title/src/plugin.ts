import { definePlugin, type PluginContext, type PluginDefinition } from '@keel/agent'
import { errorRecordOf } from '@keel/base'
import { LlmError, messageText, type TokenUsage } from '@keel/llm'
import type { ErrorRecord, SessionEventMap, SessionSeq } from '@keel/session'
import { z } from 'zod'
import { ownedEventTypes } from './events.generated.js'
import type { SessionTitleService } from './services.js'
import { cleanTitle, sessionTitleProjection, titleMessages, userTitle } from './title.js'

/** The session-title plugin's config, as a preset holds it. */
export const sessionTitleConfigSchema = z.strictObject({
  /** Ask the model for a title after the first turn (a person's `/title` works either way). */
  enabled: z.boolean().default(true),
  /** Model id of the title request; the adapter's default when absent (pick a small, fast one). */
  model: z.string().min(1).optional(),
  /** `max_tokens` of the title request (a reasoning model spends some of it thinking). */
  maxTokens: z.number().int().min(8).max(4096).default(128),
  /** The request is abandoned after this long, in ms (and recorded as failed). */
  timeoutMs: z.number().int().min(100).default(20_000),
  /**
   * Ask also for a session whose header already has a title (one started with a task:
   * `keel "task"`, `keel -p`, titled by it). Default false: those cost no extra request.
   */
  replaceHeaderTitle: z.boolean().default(false),
  /** Requests per session at most, failed ones included: a failed one is tried again after the next turn. */
  maxRequests: z.number().int().min(1).max(10).default(2),
})

/** The validated config of {@link sessionTitlePlugin}. */
export type SessionTitleConfig = z.output<typeof sessionTitleConfigSchema>

/** How long the next turn waits for a title request still running (so requests stay in order). */
export const TITLE_HOLD_MS = 5000

/** One title request: ask, wait (bounded), record the outcome, then the title. */
async function requestTitle(
  ctx: PluginContext<SessionTitleConfig>,
  turn: number,
  signal: AbortSignal,
): Promise<void> {
  const { session, config, llm } = ctx
  const messages = titleMessages(session.events)
  if (messages === undefined) return
  const request: SessionEventMap['session/title-llm-request']['request'] = {
    ...(config.model === undefined ? {} : { model: config.model }),
    maxTokens: config.maxTokens,
    messages,
  }
  let provider = llm.provider
  let model = config.model ?? llm.model
  let usage: TokenUsage | undefined
  let answer: string | undefined
  let error: ErrorRecord | undefined
  try {
    for await (const chunk of llm.stream({ ...request, signal })) {
      if (chunk.type === 'usage') usage = chunk.usage
      if (chunk.type !== 'finish') continue
      provider = chunk.record.provider
      model = chunk.record.model
      usage = chunk.usage ?? usage
      answer = messageText(chunk.message)
    }
    if (answer === undefined)
      throw new LlmError('malformed-response', 'the title stream ended without a finish chunk')
  } catch (caught) {
    error = signal.aborted
      ? { code: 'TITLE_TIMEOUT', message: `the title request was abandoned (${signal.reason ?? 'aborted'})` }
      : errorRecordOf(caught, 'TITLE_REQUEST_FAILED')
  }
  const title = answer === undefined ? undefined : cleanTitle(answer)
  if (error === undefined && title === undefined) {
    error = { code: 'TITLE_EMPTY', message: 'the model answered the title request with no usable title' }
  }
  const taken = session.project(sessionTitleProjection).source === 'user'
  const outcome = error !== undefined ? 'failed' : taken ? 'discarded' : 'title'
  const logged = session.append(
    'session/title-llm-request',
    {
      turn,
      request,
      provider,
      model,
      ...(usage === undefined ? {} : { usage }),
      outcome,
      ...(title === undefined ? {} : { title }),
      ...(error === undefined ? {} : { error }),
    },
    { ignorable: true },
  )
  if (outcome === 'title' && title !== undefined) {
    session.append(
      'session/title',
      { title, source: 'model', requestSeq: logged.seq as SessionSeq },
      { ignorable: true },
    )
  }
  // between turns nothing else makes it durable until the next prompt or the close: a listing
  // elsewhere would show no title, and a crash would lose the request it paid for
  await ctx.flush()
  if (outcome === 'title' && title !== undefined) ctx.display('session-title', `titled the session: ${title}`)
}

/**
 * Session titles. When a turn ends in a session a person attends (an interactive answerer
 * is lent) that has no title yet — no `session/title`, and no header title unless
 * `replaceHeaderTitle` — (and fewer than
 * `maxRequests` title requests), it asks the model for one in a separate small request —
 * the instruction and an excerpt of the first exchange, no tools — logged as
 * `session/title-llm-request` (the request, usage, outcome), then `session/title`. `/title
 * text` sets a person's title, which wins. The next turn waits up to {@link TITLE_HOLD_MS}
 * for a request still running, and closing waits for it (bounded by `timeoutMs`), so its
 * events land between turns. Provides `session.title`.
 */
export const sessionTitlePlugin: PluginDefinition<SessionTitleConfig> = definePlugin<SessionTitleConfig>({
  name: '@keel/session-title',
  config: sessionTitleConfigSchema,
  events: ownedEventTypes,
  provides: ['session.title'],
  setup(ctx) {
    const { session, config, clock } = ctx
    let running: { done: Promise<void>; controller: AbortController } | undefined
    const due = (): boolean => {
      const state = session.project(sessionTitleProjection)
      const titled =
        state.title !== undefined || (session.header.title !== undefined && !config.replaceHeaderTitle)
      // Only with a person at the session (an interactive answerer is lent): a session a
      // program drives (`keel -p --input-format stream-json`) is titled with its first prompt.
      const attended = ctx.answerers().some((a) => a.kind === 'interactive')
      return config.enabled && attended && !titled && state.requests < config.maxRequests
    }
    const start = (turn: number): void => {
      if (running !== undefined || !due()) return
      const controller = new AbortController()
      const timer = clock.setTimeout(() => controller.abort(`after ${config.timeoutMs} ms`), config.timeoutMs)
      const done = requestTitle(ctx, turn, controller.signal)
        .catch((error: unknown) =>
          ctx.display(
            'session-title-error',
            `the title was not recorded: ${errorRecordOf(error, 'TITLE_FAILED').message}`,
          ),
        )
        .finally(() => {
          clock.clearTimeout(timer)
          running = undefined
        })
      running = { done, controller }
    }
    const wait = async (ms: number, signal?: AbortSignal): Promise<void> => {
      const current = running
      if (current === undefined) return
      let timer: unknown
      let onAbort: (() => void) | undefined
      await Promise.race([
        current.done,
        new Promise<void>((resolve) => {
          timer = clock.setTimeout(resolve, ms)
          onAbort = resolve
          signal?.addEventListener('abort', onAbort, { once: true })
        }),
      ])
      clock.clearTimeout(timer)
      if (onAbort !== undefined) signal?.removeEventListener('abort', onAbort)
    }
    // A subscriber may not append: the request starts after the `turn/end` is committed.
    const unsubscribe = session.subscribe((event) => {
      if (event.type === 'turn/end') queueMicrotask(() => start(event.data.turn))
    })
    const service: SessionTitleService = {
      current: () => {
        const { title, source } = session.project(sessionTitleProjection)
        return title === undefined || source === undefined ? undefined : { title, source }
      },
      set(text) {
        const title = userTitle(text)
        if (title === undefined) return undefined
        session.append('session/title', { title, source: 'user' }, { ignorable: true })
        return title
      },
    }
    ctx.provide('session.title', service)
    ctx.registerCommand('title', {
      description: 'show the session title, or set your own (it wins over the model’s)',
      usage: '[text]',
      async run(args) {
        if (args.trim() === '') {
          const now = service.current()
          return now === undefined
            ? 'no title yet'
            : `title: ${now.title} (${now.source === 'user' ? 'yours' : 'by the model'})`
        }
        return `title: ${service.set(args)}`
      },
    })
    ctx.intercept({
      async promptSubmit({ signal }) {
        await wait(TITLE_HOLD_MS, signal)
        return { action: 'accept' }
      },
      async sessionEnd() {
        await wait(config.timeoutMs)
      },
    })
    return async () => {
      unsubscribe()
      running?.controller.abort('the agent closed')
      await running?.done
    }
  },
})
