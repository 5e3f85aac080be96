const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/** Replaces lone UTF-16 surrogates with U+FFFD so the text survives UTF-8 storage unchanged. */
export function toWellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD')
}

/** What a NUL character becomes in tool output: U+2400 SYMBOL FOR NULL (`␀`). */
export const VISIBLE_NUL = '\u2400'

/**
 * Makes tool output sane text before it becomes an event or a stored-aside file: lone
 * surrogates become U+FFFD (UTF-8 cannot encode them) and NUL characters become
 * {@link VISIBLE_NUL} (`␀`). NUL is made visible rather than kept because PostgreSQL's
 * jsonb cannot store `\u0000`, C tools treat it as the end of a string, and a model gains
 * nothing from an invisible byte; one character in, one character out, so lengths and
 * offsets are unchanged. Every other character (including other control characters) is
 * kept as is.
 */
export function toModelText(text: string): string {
  const wellFormed = toWellFormed(text)
  return wellFormed.includes('\0') ? wellFormed.replaceAll('\0', VISIBLE_NUL) : wellFormed
}

/** A truncated view of an over-long text: the first `head` and last `tail` characters around a notice. */
export interface TruncatedView {
  view: string
  /** `view` starts with `text.slice(0, head)`. */
  head: number
  /** `view` ends with `text.slice(text.length - tail)`. */
  tail: number
}

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff

/**
 * Cuts `text` to about `maxChars`: head (≈60%) and tail (≈40%) of the budget left after the
 * notice, on line boundaries when one is near, never inside a surrogate pair. The notice
 * names the omitted range, the total size (`totalChars`, default `text.length`: pass the
 * size of the complete output when `text` is already a window of it) and `location`
 * (where the full text is).
 */
export function truncateText(
  text: string,
  maxChars: number,
  location: string,
  totalChars = text.length,
): TruncatedView {
  const notice = (omitted: number) =>
    `\n\n[… ${omitted.toLocaleString('en-US')} of ${totalChars.toLocaleString('en-US')} characters omitted. ${location} …]\n\n`
  const budget = Math.max(0, maxChars - notice(totalChars).length)
  let head = Math.floor(budget * 0.6)
  let tail = budget - head
  // prefer line boundaries when one is in the second half of the head / first half of the tail
  const nl = text.lastIndexOf('\n', head - 1)
  if (nl >= 0 && nl + 1 >= head / 2) head = nl + 1
  const tailStart = text.length - tail
  const nl2 = text.indexOf('\n', tailStart)
  if (nl2 >= 0 && nl2 + 1 <= text.length - tail / 2) tail = text.length - (nl2 + 1)
  if (head > 0 && isHigh(text.charCodeAt(head - 1))) head -= 1
  if (tail > 0 && isHigh(text.charCodeAt(text.length - tail - 1))) tail -= 1
  if (head + tail >= text.length) return { view: text, head: text.length, tail: 0 }
  const omitted = totalChars - head - tail
  const view = text.slice(0, head) + notice(omitted) + text.slice(text.length - tail)
  return { view, head, tail }
}
