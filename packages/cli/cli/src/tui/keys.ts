import { useStdin } from 'ink'
import { useEffect, useRef, useState } from 'react'
import { type Key, KeyDecoder } from './line-editor.js'

/** What the terminal sent: one key, or a paste (text with line breaks inside, arriving at once). */
export type KeyEvent =
  | { readonly kind: 'key'; readonly text: string; readonly key: Key }
  | { readonly kind: 'paste'; readonly text: string }

const ESC = '\x1b'

/**
 * Whether one chunk of input is a paste: a line break between two other characters and no
 * escape sequence. (Ink 6 has no bracketed-paste mode. A line typed faster than it is read
 * ends in its Enter, and an Enter followed by fast typing starts with it: both are keys.)
 */
export function isPaste(chunk: string): boolean {
  if (chunk.length < 3 || chunk.includes(ESC)) return false
  return /[^\r\n][\r\n]+[^\r\n]/u.test(chunk)
}

/**
 * Every key the terminal sends, decoded by readline's decoder (so Backspace and Delete,
 * Ctrl and Alt combinations are told apart), from the raw input Ink reads: Ink 6's
 * `useInput` reports Backspace and Delete alike and loses the sequence. Ink has already
 * split its input into whole sequences and held a lone Esc until it knows it is one.
 *
 * Returns whether keys are heard yet: false on the first frame, true once the terminal is in
 * raw mode and the listener is on (the effects run after the first frame is written). Until
 * then a key is read by the terminal's line discipline, echoed and held to the next Enter;
 * the prompt is drawn only once it is true, so what a person sees invites typing only when
 * typing works.
 */
export function useKeys(handler: (event: KeyEvent) => void): boolean {
  const { internal_eventEmitter: emitter, setRawMode, isRawModeSupported } = useStdin()
  const current = useRef(handler)
  current.current = handler
  useEffect(() => {
    if (!isRawModeSupported) return
    setRawMode(true)
    return () => setRawMode(false)
  }, [isRawModeSupported, setRawMode])
  useEffect(() => {
    const decoder = new KeyDecoder()
    const cooked = cookedWindow()
    const decode = (keys: string) =>
      decoder.decode(keys, (text, key) => current.current({ kind: 'key', text, key }))
    const onInput = (chunk: string) => {
      if (cooked.open()) {
        // typed while keel started, before raw mode: the terminal cooked each Enter into a line feed
        decode(chunk.replace(/\n/gu, '\r'))
        return
      }
      if (chunk === ESC) {
        current.current({
          kind: 'key',
          text: '',
          key: { sequence: ESC, name: 'escape', ctrl: false, meta: false, shift: false },
        })
        return
      }
      if (isPaste(chunk)) {
        current.current({ kind: 'paste', text: chunk.replace(/\r\n?/gu, '\n') })
        return
      }
      decode(chunk)
    }
    emitter.on('input', onInput)
    return () => {
      cooked.close()
      emitter.removeListener('input', onInput)
    }
  }, [emitter])
  const [listening, setListening] = useState(false)
  // after the two effects above (effects run in order): raw mode is on and keys are heard
  useEffect(() => setListening(true), [])
  return listening
}

/**
 * While keel starts, the terminal is still in its cooked mode: what is typed then is echoed,
 * held by the line discipline and handed over once raw mode is on, each Enter turned into a
 * line feed (ICRNL), which in raw mode is Ctrl-J (a new line in the input). Those bytes are
 * read by the first reads after raw mode is on, so input that arrives within two turns of the
 * event loop from then (the turn whose poll may already have passed, and the next, whose poll
 * reads what the terminal held) is taken as typed cooked: its line feeds are Enter. A key
 * pressed in raw mode within that millisecond or two is the only thing mistaken for it.
 */
function cookedWindow(): { open(): boolean; close(): void } {
  let open = true
  let timer = setImmediate(() => {
    timer = setImmediate(() => {
      open = false
    })
  })
  return {
    open: () => open,
    close: () => {
      clearImmediate(timer)
      open = false
    },
  }
}
