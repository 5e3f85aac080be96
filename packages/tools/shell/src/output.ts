import { errorMessage } from '@keel/base'
import { type AsideConfig, AsideFile, VISIBLE_NUL } from '@keel/tools'

/** Keeps the head and the tail of a stream of text within a character budget. */
class Window {
  #head = ''
  #tail = ''
  #dropped = 0
  readonly #headCap: number
  readonly #tailCap: number

  constructor(maxChars: number) {
    this.#headCap = Math.floor(maxChars * 0.4)
    this.#tailCap = maxChars - this.#headCap
  }

  push(text: string): void {
    if (text === '') return
    if (this.#dropped === 0 && this.#tail === '' && this.#head.length < this.#headCap) {
      const room = this.#headCap - this.#head.length
      this.#head += text.slice(0, room)
      text = text.slice(room)
      if (text === '') return
    }
    this.#tail += text
    if (this.#tail.length > this.#tailCap * 2) {
      const cut = this.#tail.length - this.#tailCap
      this.#dropped += cut
      this.#tail = this.#tail.slice(cut)
    }
  }

  toString(): string {
    let tail = this.#tail
    let dropped = this.#dropped
    if (tail.length > this.#tailCap) {
      dropped += tail.length - this.#tailCap
      tail = tail.slice(tail.length - this.#tailCap)
    }
    if (dropped === 0) return this.#head + tail
    return `${this.#head}\n[… ${dropped.toLocaleString('en-US')} characters of output omitted here …]\n${tail}`
  }
}

/** The collected output of one command. */
export interface CollectedOutput {
  /** All of it, or its head and tail around an "omitted" note when it outgrew memory. */
  text: string
  /** Where the complete output went once it outgrew memory. */
  storedAside?: { path: string; chars: number }
  /** Said when the complete output could not be kept (disk cap, disk error). */
  notes: string[]
}

/**
 * The combined output of a command, made sane text as it arrives (decoded UTF-8, NUL shown as `␀`). Up to
 * `memoryChars` it is kept in memory; past that it is streamed in full to a stored-aside
 * file (bounded by the call's disk cap) while memory keeps only a head/tail window, so a
 * command printing gigabytes neither exhausts memory nor loses its output.
 */
export class CommandOutput {
  readonly #memoryChars: number
  readonly #aside: AsideConfig | undefined
  readonly #name: string
  #chunks: string[] = []
  #length = 0
  #window: Window | undefined
  #file: AsideFile | undefined
  #total = 0
  readonly #notes: string[] = []

  constructor(memoryChars: number, aside: AsideConfig | undefined, name: string) {
    this.#memoryChars = memoryChars
    this.#aside = aside
    this.#name = name
  }

  /** Adds text; false asks the producer to pause until {@link drained}. */
  push(raw: string): boolean {
    if (raw === '') return true
    // StringDecoder output is already well-formed (invalid UTF-8 became U+FFFD): only NUL is left to
    // make visible, which keeps this path cheap for commands printing hundreds of megabytes
    const text = raw.includes('\0') ? raw.replaceAll('\0', VISIBLE_NUL) : raw
    this.#total += text.length
    if (this.#window === undefined) {
      this.#chunks.push(text)
      this.#length += text.length
      if (this.#length <= this.#memoryChars) return true
      return this.#spill()
    }
    this.#window.push(text)
    return this.#file ? this.#file.write(text) : true
  }

  #spill(): boolean {
    const all = this.#chunks.join('')
    this.#chunks = []
    this.#window = new Window(this.#memoryChars)
    this.#window.push(all)
    if (this.#aside === undefined) {
      this.#notes.push('[the complete output was not kept: no stored-aside directory was configured]')
      return true
    }
    try {
      this.#file = new AsideFile(this.#aside, this.#name)
    } catch (error) {
      this.#notes.push(`[the complete output could not be stored aside: ${errorMessage(error)}]`)
      return true
    }
    return this.#file.write(all)
  }

  /** Resolves once the stored-aside file can take more. */
  drained(): Promise<void> {
    return this.#file?.drained() ?? Promise.resolve()
  }

  /** Closes the stored-aside file (if any) and returns what the model gets. */
  async finish(): Promise<CollectedOutput> {
    if (this.#window === undefined) return { text: this.#chunks.join(''), notes: this.#notes }
    const text = this.#window.toString()
    if (this.#file === undefined) return { text, notes: this.#notes }
    try {
      const summary = await this.#file.close()
      if (summary.discardedChars > 0) {
        this.#notes.push(
          `[the stored-aside file holds the first ${summary.bytes.toLocaleString('en-US')} bytes: the disk cap of one call is ${this.#aside!.maxBytes.toLocaleString('en-US')} bytes; ${summary.discardedChars.toLocaleString('en-US')} later characters were discarded]`,
        )
      }
      return { text, storedAside: { path: summary.path, chars: summary.chars }, notes: this.#notes }
    } catch (error) {
      this.#notes.push(`[the complete output could not be stored aside: ${errorMessage(error)}]`)
      return { text, notes: this.#notes }
    }
  }

  /** Abandons the stored-aside file (spawn failure). */
  destroy(): void {
    this.#file?.destroy()
  }
}
