// Lines laid out for the terminal's width by Keel itself, with their continuation indented:
// text the terminal (or Ink) wraps starts again at column 0, mid-phrase.

/**
 * `parts` joined by `sep` after `lead`, in lines of at most `columns` characters, each
 * after the first starting with `indent` spaces (one that starts a part: the separator, as
 * `· `, ending there). A line breaks between parts; a part longer than a whole line breaks
 * between its words (a word longer than a line stands alone).
 */
export function hang(
  lead: string,
  parts: readonly string[],
  sep: string,
  indent: number,
  columns: number,
): string {
  const lines: string[] = []
  let line = lead
  let empty = true
  // a line that starts a part after a break shows the separator (`· `) before it
  const mark = sep.trim() === '' || indent < 2 ? '' : `${sep.trim()} `
  const put = (text: string, joiner: string) => {
    if (!empty && line.length + joiner.length + text.length > columns) {
      lines.push(line)
      line = joiner === sep && mark !== '' ? ' '.repeat(indent - mark.length) + mark : ' '.repeat(indent)
      empty = true
    }
    line = empty ? line + text : line + joiner + text
    empty = false
  }
  for (const part of parts) {
    const fits = (empty ? line.length : line.length + sep.length) + part.length <= columns
    if (fits || indent + part.length <= columns || !part.includes(' ')) put(part, sep)
    else for (const [i, word] of part.split(' ').entries()) put(word, i === 0 ? sep : ' ')
  }
  lines.push(line)
  return lines.join('\n')
}

/**
 * `text` after `prefix`, each of its lines wrapped between words to `columns`, every line
 * after the first indented by `indent` spaces (`← read_file ✓ …` continues under its text).
 */
export function hangingText(prefix: string, text: string, indent: number, columns: number): string {
  const pad = ' '.repeat(indent)
  return text
    .split('\n')
    .map((line, i) => hang(i === 0 ? prefix : pad, line.split(' '), ' ', indent, columns))
    .join('\n')
}

/**
 * Each line of `text` wrapped between words to `columns`, where it goes on indented `indent`
 * spaces past the line's own indentation (for text whose lines start where they are, as a
 * command's report: a line that fits is left as it is).
 */
export function wrapEachLine(text: string, indent: number, columns: number): string {
  return text
    .split('\n')
    .map((line) => {
      if (line.length <= columns) return line
      const own = line.length - line.trimStart().length
      const words = line.slice(own).split(' ')
      return hang(line.slice(0, own), words, ' ', Math.min(own + indent, Math.floor(columns / 2)), columns)
    })
    .join('\n')
}
