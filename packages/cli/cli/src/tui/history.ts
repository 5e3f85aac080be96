import { createHash } from 'node:crypto'
import { appendFile, mkdir, readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { errorMessage } from '@keel/base'
import { z } from 'zod'

/** Most entries read back (the file itself only grows; the newest are kept). */
export const HISTORY_SIZE = 1000

/** Longest entry kept (a huge paste is not worth recalling in full). */
const MAX_ENTRY_CHARS = 100_000

const entrySchema = z.object({ text: z.string(), time: z.number(), cwd: z.string() })

/**
 * The input history of one project (the directory `keel` works in), as Claude Code and
 * Gemini CLI keep it: one JSON line per submitted input in `$KEEL_HOME/history/<key>.jsonl`,
 * where `<key>` is a digest of the directory, appended as each input is sent (several `keel`s
 * in one project append whole lines), readable only by its owner.
 */
export class InputHistory {
  readonly file: string
  readonly #cwd: string

  constructor(home: string, cwd: string) {
    this.#cwd = cwd
    const key = createHash('sha256').update(cwd).digest('hex').slice(0, 16)
    this.file = join(home, 'history', `${key}.jsonl`)
  }

  /**
   * The entries, newest first, without repeats; a missing file is an empty history. Lines
   * that are not entries (a torn write, an edit by hand) are skipped and counted.
   */
  async load(): Promise<{ entries: string[]; skipped: number }> {
    let raw: string
    try {
      raw = await readFile(this.file, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { entries: [], skipped: 0 }
      throw error
    }
    const seen = new Set<string>()
    const entries: string[] = []
    let skipped = 0
    const lines = raw.split('\n')
    for (let i = lines.length - 1; i >= 0 && entries.length < HISTORY_SIZE; i--) {
      const line = lines[i]!
      if (line.trim() === '') continue
      let parsed: z.infer<typeof entrySchema> | undefined
      try {
        parsed = entrySchema.parse(JSON.parse(line))
      } catch {
        parsed = undefined
      }
      if (parsed === undefined) {
        skipped++
        continue
      }
      if (parsed.cwd !== this.#cwd || seen.has(parsed.text)) continue
      seen.add(parsed.text)
      entries.push(parsed.text)
    }
    return { entries, skipped }
  }

  /** Appends one entry; a failure is returned as text for the UI to show, never thrown. */
  async append(text: string): Promise<string | undefined> {
    if (text.trim() === '' || text.length > MAX_ENTRY_CHARS) return undefined
    try {
      await mkdir(join(this.file, '..'), { recursive: true, mode: 0o700 })
      await appendFile(this.file, `${JSON.stringify({ text, time: Date.now(), cwd: this.#cwd })}\n`, {
        mode: 0o600,
      })
      return undefined
    } catch (error) {
      return `the input history could not be saved to ${this.file}: ${errorMessage(error)}`
    }
  }
}
