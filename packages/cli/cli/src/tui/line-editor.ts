// The input line's editing engine is Node's own `readline` (maintained with Node itself):
// an `Interface` in terminal mode that is never given a real stream — each key is handed to
// it with `write(sequence, key)`, it edits its `line` and `cursor` synchronously (so several
// keys arriving in one read all apply), and the Ink prompt draws `line` with the cursor.
// It brings Left/Right, Home/End, Ctrl-A/E/B/F, word moves (Alt-B/F, Ctrl-←/→), Backspace,
// Delete, Ctrl-W/U/K, Alt-D, Ctrl-Y (yank), Ctrl-_ (undo), and Up/Down through its history.
// What readline has no notion of is added here: a newline inside the text (Ctrl-J,
// `\`+Enter, a paste) and Up/Down moving between the lines of a multi-line text.
import { createInterface, emitKeypressEvents, type Interface } from 'node:readline'
import { PassThrough, Writable } from 'node:stream'

/** One decoded key, as readline names it (`name` is absent for a printable character). */
export interface Key {
  readonly sequence: string
  readonly name?: string | undefined
  readonly ctrl: boolean
  readonly meta: boolean
  readonly shift: boolean
}

/** Decodes raw terminal input into keys with readline's own decoder (Backspace and Delete told apart). */
export class KeyDecoder {
  readonly #stream = new PassThrough()
  #sink: (text: string, key: Key) => void = () => {}

  constructor() {
    emitKeypressEvents(this.#stream)
    this.#stream.on('keypress', (text: string | undefined, key: Key | undefined) => {
      const sequence = key?.sequence ?? text ?? ''
      this.#sink(text ?? '', key ?? { sequence, ctrl: false, meta: false, shift: false })
    })
  }

  /** Decodes one chunk (a whole key sequence or a run of text) into keys, synchronously. */
  decode(chunk: string, onKey: (text: string, key: Key) => void): void {
    this.#sink = onKey
    try {
      this.#stream.write(chunk)
    } finally {
      this.#sink = () => {}
    }
  }
}

/** Where the cursor is in a multi-line text: line index and column. */
function position(text: string, cursor: number): { line: number; column: number; starts: number[] } {
  const starts = [0]
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1)
  let line = 0
  while (line + 1 < starts.length && starts[line + 1]! <= cursor) line++
  return { line, column: cursor - starts[line]!, starts }
}

/**
 * The cursor one line up (`-1`) or down (`1`) in a multi-line text, at the same column or
 * the line's end; `undefined` on the first (last) line, where Up (Down) goes through history.
 */
export function verticalMove(text: string, cursor: number, direction: -1 | 1): number | undefined {
  const { line, column, starts } = position(text, cursor)
  const target = line + direction
  if (target < 0 || target >= starts.length) return undefined
  const end = target + 1 < starts.length ? starts[target + 1]! - 1 : text.length
  return Math.min(starts[target]! + column, end)
}

const discard = new Writable({
  write(_chunk, _encoding, callback) {
    callback()
  },
})

/** Options of {@link LineEditor}. */
export interface LineEditorOptions {
  /** Earlier entries, newest first (readline's order). */
  history?: readonly string[]
  /** Most entries kept. Default 1000. */
  historySize?: number
}

/** An editable input line over readline (see the module comment). */
export class LineEditor {
  readonly #rl: Interface & { line: string; cursor: number; history: string[] }
  #submitted: string | undefined

  constructor(options: LineEditorOptions = {}) {
    this.#rl = createInterface({
      input: new PassThrough(),
      output: discard,
      terminal: true,
      prompt: '',
      history: [...(options.history ?? [])],
      historySize: options.historySize ?? 1000,
      removeHistoryDuplicates: true,
      tabSize: 2,
    }) as Interface & { line: string; cursor: number; history: string[] }
    this.#rl.on('line', (line: string) => {
      this.#submitted = line
    })
    // Readline reacts to Ctrl-C / Ctrl-Z itself when nobody listens; the UI owns those keys.
    this.#rl.on('SIGINT', () => {})
    this.#rl.on('SIGTSTP', () => {})
  }

  get text(): string {
    return this.#rl.line
  }

  get cursor(): number {
    return this.#rl.cursor
  }

  /** History entries, newest first. */
  get history(): readonly string[] {
    return this.#rl.history
  }

  /** Applies one editing key (not Enter, Tab, Ctrl-C, Ctrl-D, Esc: the UI decides those). */
  key(text: string, key: Key): void {
    if ((key.name === 'up' || key.name === 'down') && this.#rl.line.includes('\n')) {
      const moved = verticalMove(this.#rl.line, this.#rl.cursor, key.name === 'up' ? -1 : 1)
      if (moved !== undefined) {
        this.#rl.cursor = moved
        return
      }
    }
    this.#rl.write(text, key)
  }

  /** Inserts text at the cursor, newlines kept (a paste, Ctrl-J, a completion). */
  insert(text: string): void {
    const { line, cursor } = this.#rl
    this.#rl.line = line.slice(0, cursor) + text + line.slice(cursor)
    this.#rl.cursor = cursor + text.length
  }

  /** Replaces the text (the cursor goes to its end). */
  set(text: string): void {
    this.#rl.line = text
    this.#rl.cursor = text.length
  }

  /** Whether the character before the cursor is a `\` (then Enter adds a line instead). */
  get continues(): boolean {
    return this.#rl.cursor > 0 && this.#rl.line[this.#rl.cursor - 1] === '\\'
  }

  /** `\`+Enter: the backslash becomes a newline. */
  continueLine(): void {
    const { line, cursor } = this.#rl
    this.#rl.line = `${line.slice(0, cursor - 1)}\n${line.slice(cursor)}`
  }

  /** Enter: the text is taken (and added to the history when not blank); the line is empty again. */
  submit(): string {
    this.#submitted = undefined
    this.#rl.write('\r', { sequence: '\r', name: 'return', ctrl: false, meta: false, shift: false })
    const taken = this.#submitted ?? ''
    this.#submitted = undefined
    return taken
  }

  close(): void {
    this.#rl.close()
  }
}
