import { describe, expect, it } from 'vitest'
import { KeyDecoder, LineEditor, verticalMove } from '../src/tui/line-editor.js'

/** Types raw terminal input into an editor the way the prompt does (each chunk decoded into keys). */
function typist(history: string[] = []) {
  const editor = new LineEditor({ history })
  const decoder = new KeyDecoder()
  const type = (...chunks: string[]) => {
    for (const chunk of chunks) decoder.decode(chunk, (text, key) => editor.key(text, key))
  }
  return { editor, type, state: () => [editor.text, editor.cursor] as const }
}

describe('the input line (readline as the editing engine)', () => {
  it('edits where the cursor is: Left, Home/End, Ctrl-A/E, words, Delete vs Backspace', () => {
    const t = typist()
    t.type('helo', '\x1b[D', 'l')
    expect(t.state()).toEqual(['hello', 4])
    t.type('\x1b[D\x1b[D\x1b[D') // three arrows in one read all apply
    expect(t.editor.cursor).toBe(1)
    t.type('\x1b[F', ' big world', '\x1bb') // End, text, Alt-B
    expect(t.state()).toEqual(['hello big world', 10])
    t.type('\x1b[1;5D') // Ctrl-←
    expect(t.editor.cursor).toBe(6)
    t.type('\x1b[3~') // Delete removes the character under the cursor
    expect(t.state()).toEqual(['hello ig world', 6])
    t.type('\x7f') // Backspace the one before it
    expect(t.state()).toEqual(['helloig world', 5])
    t.type('\x01', 'X', '\x05', 's') // Ctrl-A, Ctrl-E
    expect(t.editor.text).toBe('Xhelloig worlds')
    t.type('\x17') // Ctrl-W deletes the word before the cursor
    expect(t.editor.text).toBe('Xhelloig ')
    t.type('\x1b[H', '\x0b') // Home, Ctrl-K
    expect(t.state()).toEqual(['', 0])
  })

  it('Up and Down walk the history; Enter adds to it', () => {
    const t = typist(['second', 'first'])
    t.type('\x1b[A')
    expect(t.editor.text).toBe('second')
    t.type('\x1b[A')
    expect(t.editor.text).toBe('first')
    t.type('\x1b[B')
    expect(t.editor.text).toBe('second')
    t.editor.set('third')
    expect(t.editor.submit()).toBe('third')
    expect(t.editor.text).toBe('')
    expect(t.editor.history[0]).toBe('third')
  })

  it('multi-line text: newlines inserted, `\\`+Enter continues, Up/Down move between its lines', () => {
    const t = typist()
    t.type('first')
    t.editor.insert('\n')
    t.type('second line')
    expect(t.editor.text).toBe('first\nsecond line')
    t.type('\x1b[A')
    expect(t.editor.cursor).toBe(5) // end of the shorter first line
    t.type('\x1b[B')
    expect(t.editor.cursor).toBe(11)
    t.editor.set('a \\')
    expect(t.editor.continues).toBe(true)
    t.editor.continueLine()
    expect(t.state()).toEqual(['a \n', 3])
    expect(verticalMove('ab\ncd', 4, 1)).toBeUndefined()
    expect(verticalMove('ab\ncd', 4, -1)).toBe(1)
    expect(t.editor.submit()).toBe('a \n')
  })
})
