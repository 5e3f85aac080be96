import { describe, expect, it } from 'vitest'
import { createWatchingFetch, sawDone } from '../src/done-watch.js'

/** A `fetch` answering an SSE body of `chunks`. */
const serving =
  (chunks: readonly string[]): typeof fetch =>
  async () => {
    const bytes = chunks.map((c) => new TextEncoder().encode(c))
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const b of bytes) controller.enqueue(b)
        controller.close()
      },
    })
    return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
  }

/** Reads the watched body to its end, as the client does; whether the watch saw `[DONE]` last. */
async function watch(chunks: readonly string[]): Promise<boolean | undefined> {
  const response = await createWatchingFetch(serving(chunks))('http://x/')
  for await (const _ of response.body as unknown as AsyncIterable<Uint8Array>) {
    // the client decodes the chunks; only the end matters here
  }
  return sawDone(response)
}

/** `text` cut at the given offsets. */
const cut = (text: string, at: readonly number[]): string[] =>
  [0, ...at, text.length].slice(1).map((end, i) => text.slice([0, ...at][i], end))

/** A seeded sequence of cut offsets for `text` (chunks of 1 to `max` characters). */
function offsets(length: number, seed: number, max: number): number[] {
  const at: number[] = []
  let x = seed
  for (let p = 0; ; ) {
    x = (x * 1103515245 + 12345) % 2 ** 31
    p += 1 + (x % max)
    if (p >= length) return at
    at.push(p)
  }
}

describe('the [DONE] watch', () => {
  const data = `data: ${JSON.stringify({ text: 'x'.repeat(150) })}\n\n`
  const ended = `${data}${data}data: [DONE]\n\n`
  const cutShort = `${data}data: [DONE]\n\n${data}`

  it('sees the closing marker however the stream is cut (chunks shorter and longer than what it keeps)', async () => {
    for (let seed = 1; seed <= 40; seed++) {
      const max = seed % 4 === 0 ? 200 : 1 + (seed % 17)
      expect(await watch(cut(ended, offsets(ended.length, seed, max)))).toBe(true)
      expect(await watch(cut(cutShort, offsets(cutShort.length, seed, max)))).toBe(false)
    }
  })

  it('a marker split over the last chunks, or alone in the last one, is seen', async () => {
    const at = ended.length - 'data: [DONE]\n\n'.length
    for (let split = at; split < ended.length; split++) {
      expect(await watch([ended.slice(0, split), ended.slice(split)])).toBe(true)
    }
    expect(await watch([ended.slice(0, at), 'd', 'a', 't', 'a', ': [DONE]', '\n', '\n'])).toBe(true)
  })

  it('a stream without the marker is not done', async () => {
    expect(await watch([data, data])).toBe(false)
    expect(await watch([])).toBe(false)
  })
})
