import { open } from 'node:fs/promises'
import { titleOfEvents } from '@keel/session-title'
import type { SessionStore } from '@keel/store'
import { JsonlStore } from '@keel/store-jsonl'

/** How every stored `session/title` line of a JSONL log begins (the envelope's `type` comes first). */
const NEEDLE = Buffer.from('\n{"type":"session/title",')
const CHUNK = 1 << 20
/** A title line is far shorter (a title is at most 200 characters); a longer one is not read. */
const MAX_LINE = 16 * 1024

/**
 * The `session/title` events of a JSONL log, found by scanning its bytes for the lines that
 * start with their type: nothing else is parsed or validated, so this costs about one
 * sequential read of the file (what counting its events costs) instead of a load.
 */
export async function titleLinesOf(file: string): Promise<unknown[]> {
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
      for (let at = filled.indexOf(NEEDLE); at !== -1; at = filled.indexOf(NEEDLE, at + 1))
        starts.push(base + at + 1)
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
 * undefined. A JSONL log is scanned for its title lines only ({@link titleLinesOf}); other
 * stores load the session.
 */
export async function latestTitle(store: SessionStore, id: string): Promise<string | undefined> {
  if (store instanceof JsonlStore) {
    try {
      return titleOfEvents(await titleLinesOf(store.fileOf(id)))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw error
    }
  }
  return titleOfEvents((await store.load(id)).events)
}
