import { open } from 'node:fs/promises'
import type { SessionEvent } from '@keel/session'
import { titleOfEvents } from '@keel/session-title'
import type { SessionStore } from '@keel/store'
import { JsonlStore } from '@keel/store-jsonl'
import { z } from 'zod'
import { titleOf } from './deferred-session.js'

const CHUNK = 1 << 20
/** A title line is far shorter (a title is at most 200 characters); a longer one is not read. */
const MAX_LINE = 16 * 1024

/**
 * The events of one `type` in a JSONL log (at most `limit`), found by scanning its bytes
 * for the lines that start with that type (the envelope's `type` comes first): nothing else
 * is parsed or validated, so this costs at most one sequential read of the file instead of
 * a load.
 */
export async function linesOfType(
  file: string,
  type: string,
  limit = Number.POSITIVE_INFINITY,
): Promise<unknown[]> {
  const NEEDLE = Buffer.from(`\n{"type":${JSON.stringify(type)},`)
  const handle = await open(file, 'r')
  try {
    const starts: number[] = []
    const buffer = Buffer.alloc(CHUNK + NEEDLE.length)
    let carried = 0
    for (let position = 0; ; ) {
      const { bytesRead } = await handle.read(buffer, carried, CHUNK, position)
      if (bytesRead === 0) break
      const end = carried + bytesRead
      const base = position - carried
      const filled = buffer.subarray(0, end)
      for (
        let at = filled.indexOf(NEEDLE);
        at !== -1 && starts.length < limit;
        at = filled.indexOf(NEEDLE, at + 1)
      )
        starts.push(base + at + 1)
      if (starts.length >= limit) break
      position += bytesRead
      carried = Math.min(NEEDLE.length - 1, end)
      buffer.copy(buffer, 0, end - carried, end)
    }
    const events: unknown[] = []
    const line = Buffer.alloc(MAX_LINE)
    for (const start of starts) {
      const { bytesRead } = await handle.read(line, 0, MAX_LINE, start)
      const stop = line.subarray(0, bytesRead).indexOf(10)
      const text = line.subarray(0, stop === -1 ? bytesRead : stop).toString('utf8')
      try {
        events.push(JSON.parse(text))
      } catch (error) {
        // A torn or foreign line: `keel sessions show` reports it; the listing shows no title from it.
        if (!(error instanceof SyntaxError)) throw error
      }
    }
    return events
  } finally {
    await handle.close()
  }
}

/**
 * The latest title of a stored session (`@keel/session-title`: a person's wins), or
 * undefined. A JSONL log is scanned for its title lines only ({@link linesOfType}); other
 * stores load the session.
 */
export async function latestTitle(store: SessionStore, id: string): Promise<string | undefined> {
  if (store instanceof JsonlStore) {
    try {
      return titleOfEvents(await linesOfType(store.fileOf(id), 'session/title'))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
  }
  return titleOfEvents((await store.load(id)).events)
}

/**
 * The first prompt of a stored session, as a title (what the listing shows for an
 * untitled session), or undefined when it has none.
 */
export async function firstPromptTitle(store: SessionStore, id: string): Promise<string | undefined> {
  let first: unknown
  if (store instanceof JsonlStore) {
    try {
      first = (await linesOfType(store.fileOf(id), 'user/message', 1))[0]
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
  } else first = (await store.load(id)).events.find((e) => e.type === 'user/message')
  const parsed = userMessageEvent.safeParse(first)
  return parsed.success ? titleOf(parsed.data as SessionEvent<'user/message'>) : undefined
}

/** Just enough of a stored `user/message` line to title a session from it. */
const userMessageEvent = z.object({
  type: z.literal('user/message'),
  data: z.object({
    message: z.object({ content: z.array(z.object({ type: z.string(), text: z.string().optional() })) }),
  }),
})
