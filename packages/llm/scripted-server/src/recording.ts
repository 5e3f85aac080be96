import type { ScriptedResponse } from './script.js'

/**
 * A message as a chat-completions client sent it. Recorded as received, not validated:
 * the fields are typed for convenient assertions only.
 */
export interface RecordedMessage {
  role: string
  content?: string | null | unknown[]
  reasoning_content?: string | null
  tool_calls?: Array<{ id: string; type: string; function: { name: string; arguments: string } }>
  tool_call_id?: string
  [key: string]: unknown
}

/** A chat-completions request body as received (not validated). */
export interface RecordedChatBody {
  model?: string
  messages?: RecordedMessage[]
  stream?: boolean
  stream_options?: { include_usage?: boolean }
  tools?: Array<{
    type: string
    function: { name: string; description?: string; parameters?: Record<string, unknown> }
  }>
  max_tokens?: number
  temperature?: number
  [key: string]: unknown
}

/**
 * What the server did with a request:
 * - `pending`: still being answered;
 * - `completed`: answered in full (a stream ended with `[DONE]`);
 * - `http-error`: answered with a scripted HTTP fault;
 * - `cut`: stopped mid-response by a `cut` fault (socket destroyed, or ended without `[DONE]`);
 * - `client-closed`: the client went away before the answer was complete (e.g. abort);
 * - `rejected`: not answered from the script (unknown path, bad JSON, wrong API key,
 *   script exhausted, invalid handler result); see {@link ScriptedServer.problems}.
 */
export type RequestOutcome = 'pending' | 'completed' | 'http-error' | 'cut' | 'client-closed' | 'rejected'

/** One request the server received, in arrival order. */
export interface RecordedRequest {
  /** 0-based arrival position. */
  index: number
  method: string
  /** Path without the query string. */
  path: string
  /** Lower-cased header names; repeated headers joined with `, `. */
  headers: Record<string, string>
  /** The parsed JSON body; `undefined` when the body was not a JSON object (see `rawBody`). */
  body: RecordedChatBody | undefined
  rawBody: string
  /** Unix epoch milliseconds. */
  receivedAt: number
  /** The scripted response used to answer, once chosen. */
  response?: ScriptedResponse
  /** How many SSE data chunks were written (the `[DONE]` marker not counted). */
  chunksSent: number
  outcome: RequestOutcome
}
