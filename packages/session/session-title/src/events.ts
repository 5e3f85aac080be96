// The events @keel/session-title owns. Declared once, here: `pnpm gen-persistence-catalog`
// generates their validators into events.generated.ts (registered on import) and the catalog entries.
import type { SystemMessage, TokenUsage, UserMessage } from '@keel/llm'
import type { ErrorRecord, SessionSeq } from '@keel/session'
import './events.generated.js'

/** Who wrote a title: the model (asked after the first turn) or a person (`/title`). */
export type SessionTitleSource = 'model' | 'user'

/**
 * What became of a title request.
 * - `title`: the model's answer gave a title, recorded as the `session/title` that follows.
 * - `discarded`: a usable answer came after a person had set a title, which wins.
 * - `failed`: the call failed, timed out, or its answer held no usable title (see `error`).
 */
export type TitleRequestOutcome = 'title' | 'discarded' | 'failed'

/** The title request exactly as it was sent to the model. */
export interface TitleRequest {
  /** The model id asked for; absent: the adapter's default. */
  model?: string
  /**
   * @integer
   * @minimum 1
   */
  maxTokens: number
  /** The instruction and the excerpt of the conversation, in order. */
  messages: Array<SystemMessage | UserMessage>
}

declare module '@keel/session' {
  interface SessionEventMap {
    /**
     * The session's title. A person's title (`/title`) wins: a model title never follows
     * one, and readers fold accordingly (the latest `user` title, else the latest `model`
     * title). `requestSeq` is the `session/title-llm-request` a model title came from.
     * Log-only, appended `ignorable` (a reader without this plugin loses only the title);
     * never part of what the model sees.
     * @example {"title":"Fix the failing greet test","source":"model","requestSeq":12}
     */
    'session/title': {
      /**
       * One line.
       * @minLength 1
       * @maxLength 200
       */
      title: string
      source: SessionTitleSource
      requestSeq?: SessionSeq
    }

    /**
     * One title request to the model, separate from the conversation, after turn `turn`:
     * the request as sent (so it can be sent again from the log alone), which provider and
     * model answered, its token usage, and the outcome. Appended when the call settled.
     * Log-only, appended `ignorable`.
     * @example {"turn":1,"request":{"maxTokens":128,"messages":[{"role":"system","content":[{"type":"text","text":"Write a title."}]},{"role":"user","content":[{"type":"text","text":"<user>Fix the test</user>"}]}]},"provider":"deepseek","model":"deepseek-chat","usage":{"inputTokens":80,"outputTokens":6,"totalTokens":86},"outcome":"title","title":"Fix the failing test"}
     */
    'session/title-llm-request': {
      /**
       * @integer
       * @minimum 1
       */
      turn: number
      request: TitleRequest
      provider: string
      model: string
      usage?: TokenUsage
      outcome: TitleRequestOutcome
      /** The title taken from the answer (`title`, `discarded`). */
      title?: string
      error?: ErrorRecord
    }
  }
}
