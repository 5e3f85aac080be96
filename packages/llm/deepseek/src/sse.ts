import { StringDecoder } from 'node:string_decoder'
import { APIError } from 'openai'

/**
 * The stream sent no byte (data or keep-alive comment) for `idleTimeoutMs`: the reader cancels
 * the body and rejects with this, which the adapter reports as a retryable `stream-idle`.
 */
export class StreamIdleTimeoutError extends Error {
  readonly idleTimeoutMs: number
  constructor(idleTimeoutMs: number) {
    super(`no byte arrived for ${idleTimeoutMs} ms`)
    this.name = 'StreamIdleTimeoutError'
    this.idleTimeoutMs = idleTimeoutMs
  }
}

/**
 * Reads a chat-completions SSE body (the bytes of `response.body`) into its chunk objects, the
 * adapter's one reader of the wire: the `openai` client's own stream would decode, cut lines and
 * build an event per message through four nested async generators, and it swallows the
 * `data: [DONE]` marker, yet a stream that ends without it was cut (DeepSeek protocol).
 *
 * - Lines end at LF, CRLF or a lone CR (a CR at a chunk's end and the LF opening the next are one
 *   end); a line starting with `:` is a comment (keep-alive); `data:` lines of one event join
 *   with LF; an empty line ends the event; every other field is ignored; an event not ended by
 *   an empty line when the body ends is dropped (the event-stream rules).
 * - `[DONE]` sets {@link done}; nothing after it is read as a chunk. Every other event's data
 *   is parsed as JSON (a `SyntaxError` on bad data, which the adapter reports as
 *   `malformed-stream`); one carrying an `error` object throws the client's {@link APIError}
 *   for it (status undefined), as the client's stream does; either is thrown after the
 *   chunks before it.
 * - Every byte restarts the idle timer (`idleMs`; one timer per stream, re-armed for what is
 *   left of the wait of the read in flight): a body silent that long is cancelled and the read
 *   in flight rejects with {@link StreamIdleTimeoutError}.
 *
 * Lean on purpose, as it runs for every chunk of every stream: no closure per read, the chunk
 * objects of one network read handed out from one array.
 */
export class SseChunks implements AsyncIterableIterator<unknown> {
  /** Whether the stream closed with `data: [DONE]`. */
  done = false
  readonly #reader: ReadableStreamDefaultReader<Uint8Array>
  readonly #headers: Headers
  readonly #idleMs: number | undefined
  /** UTF-8 with a sequence cut between two reads kept for the next (no options to convert per read, as `TextDecoder` has). */
  readonly #decoder = new StringDecoder('utf8')
  /** Nothing decoded yet: a leading byte-order mark is dropped (the event-stream rules). */
  #first = true
  /** The start of a line not yet ended. */
  #carry = ''
  /** The last network read ended at a CR: an LF opening the next one ends nothing. */
  #afterCr = false
  /** The data of the event being read; `undefined` while it has no `data` field. */
  #data: string | undefined
  #ready: unknown[] = []
  #next = 0
  #ended = false
  /** What an event of the last read failed with, thrown once the chunks before it are out. */
  #failure: unknown
  /** When the read in flight started (`performance.now()`); -1 while none waits. */
  #readingSince = -1
  #idled: StreamIdleTimeoutError | undefined
  #timer: ReturnType<typeof setTimeout> | undefined

  constructor(body: ReadableStream<Uint8Array>, headers: Headers, idleMs?: number) {
    this.#reader = body.getReader()
    this.#headers = headers
    this.#idleMs = idleMs
  }

  async next(): Promise<IteratorResult<unknown>> {
    while (this.#next === this.#ready.length) {
      if (this.#failure !== undefined) {
        this.#ended = true
        throw this.#failure
      }
      if (this.#ended) return { done: true, value: undefined }
      this.#ready.length = 0
      this.#next = 0
      const bytes = await this.#read()
      if (bytes === undefined) {
        this.#ended = true
        this.#feed(this.#decoder.end())
      } else {
        this.#feed(this.#decoder.write(bytes))
      }
    }
    const value = this.#ready[this.#next]
    this.#ready[this.#next++] = undefined
    return { done: false, value }
  }

  /** Stops reading: cancels the body (which closes the HTTP stream). */
  async return(): Promise<IteratorResult<unknown>> {
    this.#ended = true
    this.#ready.length = 0
    this.#next = 0
    this.#stopTimer()
    await this.#reader.cancel()
    return { done: true, value: undefined }
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<unknown> {
    return this
  }

  /** The next network read's bytes; `undefined` at the end of the body. */
  async #read(): Promise<Uint8Array | undefined> {
    const idleMs = this.#idleMs
    if (idleMs !== undefined) {
      this.#readingSince = performance.now()
      if (this.#timer === undefined) this.#arm(idleMs)
    }
    let result: Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>
    try {
      result = await this.#reader.read()
    } catch (error) {
      this.#ended = true
      this.#stopTimer()
      throw this.#idled ?? error
    }
    this.#readingSince = -1
    if (this.#idled !== undefined) {
      this.#ended = true
      throw this.#idled
    }
    if (result.done) {
      this.#stopTimer()
      return undefined
    }
    return result.value
  }

  /** Cuts `text` (what followed the last read) into lines and reads each. */
  #feed(text: string): void {
    let from = 0
    if (this.#first && text !== '') {
      this.#first = false
      if (text.charCodeAt(0) === 0xfeff) from = 1
    }
    if (this.#afterCr && text.charCodeAt(0) === 10) from = 1
    this.#afterCr = false
    const n = text.length
    // a lone CR is rare: look for one once per read, not per line
    let cr = text.indexOf('\r', from)
    while (from < n && this.#failure === undefined) {
      let lf = text.indexOf('\n', from)
      if (lf < 0) lf = n
      if (cr >= 0 && cr < from) cr = text.indexOf('\r', from)
      let end = lf
      let next = lf + 1
      if (cr >= 0 && cr < lf) {
        end = cr
        next = text.charCodeAt(cr + 1) === 10 ? cr + 2 : cr + 1
        if (cr === n - 1) this.#afterCr = true
      } else if (lf === n) {
        this.#carry += from === 0 ? text : text.slice(from)
        return
      }
      const line = this.#carry === '' ? text.slice(from, end) : this.#carry + text.slice(from, end)
      this.#carry = ''
      this.#line(line)
      from = next
    }
  }

  #line(line: string): void {
    if (line === '') {
      this.#dispatch()
      return
    }
    if (line.charCodeAt(0) === 58) return // ':' — a comment (keep-alive)
    const colon = line.indexOf(':')
    if ((colon < 0 ? line : line.slice(0, colon)) !== 'data') return
    let value = colon < 0 ? '' : line.slice(line.charCodeAt(colon + 1) === 32 ? colon + 2 : colon + 1)
    if (this.#data !== undefined) value = `${this.#data}\n${value}`
    this.#data = value
  }

  #dispatch(): void {
    const data = this.#data
    if (data === undefined) return
    this.#data = undefined
    if (this.done) return
    if (data.startsWith('[DONE]')) {
      this.done = true
      return
    }
    let parsed: unknown
    try {
      parsed = JSON.parse(data)
    } catch (error) {
      this.#failure = error
      return
    }
    if (typeof parsed === 'object' && parsed !== null && 'error' in parsed && parsed.error) {
      this.#failure = new APIError(undefined, parsed.error as object, undefined, this.#headers)
      return
    }
    this.#ready.push(parsed)
  }

  #arm(ms: number): void {
    this.#timer = setTimeout(() => this.#onTimer(), ms)
    this.#timer.unref?.()
  }

  #stopTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
    this.#readingSince = -1
  }

  #onTimer(): void {
    this.#timer = undefined
    const idle = this.#idleMs!
    if (this.#ended || this.#readingSince < 0) return // no read waits: the next one arms the timer
    const waited = performance.now() - this.#readingSince
    if (waited < idle) {
      this.#arm(idle - waited)
      return
    }
    const idled = new StreamIdleTimeoutError(idle)
    this.#idled = idled
    // Cancelling ends the waiting read (done), which `#read` turns into the idle error.
    // The body is given up: a failure to cancel it leaves nothing more to report.
    void this.#reader.cancel(idled).catch(() => {})
  }
}
