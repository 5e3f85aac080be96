// Model answers are markdown: rendered for the terminal by `marked` with `marked-terminal`
// (headings, emphasis, lists, block quotes, tables through cli-table3, code blocks
// highlighted through cli-highlight), at the terminal's current width.
import { Marked } from 'marked'
import { markedTerminal } from 'marked-terminal'

const FENCE = /^ {0,3}(`{3,}|~{3,})/u

/**
 * Where a streaming answer can be cut so the part before it renders the same now as it
 * will once the answer is complete: just after the last blank line that is outside a code
 * fence (a paragraph, list, table or fenced block before it is finished). 0 when there is
 * none yet. The part after it stays live and is rendered again as it grows.
 */
export function safeSplit(text: string): number {
  let fence: string | undefined
  let cut = 0
  let offset = 0
  const lines = text.split('\n')
  for (let i = 0; i < lines.length - 1; i++) {
    const line = lines[i]!
    const marker = FENCE.exec(line)?.[1]
    if (fence === undefined && marker) fence = marker
    else if (fence !== undefined && marker && marker[0] === fence[0] && marker.length >= fence.length) {
      fence = undefined
    } else if (fence === undefined && line.trim() === '' && i > 0) cut = offset + line.length + 1
    offset += line.length + 1
  }
  return cut
}

/** Closes a code fence left open by a streaming answer, so its partial code renders as code. */
export function closeOpenFence(text: string): string {
  let fence: string | undefined
  for (const line of text.split('\n')) {
    const marker = FENCE.exec(line)?.[1]
    if (fence === undefined && marker) fence = marker
    else if (fence !== undefined && marker && marker[0] === fence[0] && marker.length >= fence.length) {
      fence = undefined
    }
  }
  return fence === undefined ? text : `${text}\n${fence}`
}

const renderers = new Map<number, Marked>()

function rendererFor(width: number): Marked {
  let marked = renderers.get(width)
  if (!marked) {
    marked = new Marked(
      markedTerminal({ width, reflowText: true, showSectionPrefix: false, tab: 2, emoji: false }),
    )
    renderers.set(width, marked)
  }
  return marked
}

/**
 * Markdown rendered for a terminal `width` columns wide, as an ANSI string without trailing
 * blank lines. Never throws: text the renderer cannot take is shown as it is.
 */
export function renderMarkdown(text: string, width: number): string {
  try {
    const rendered = rendererFor(Math.max(20, width)).parse(text, { async: false })
    return rendered.replace(/\s+$/u, '')
  } catch {
    return text // shown as typed: the renderer refused it (never seen with marked's lexer)
  }
}
