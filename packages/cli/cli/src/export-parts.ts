// The pieces of the HTML export: escaping, markdown (model text is untrusted: raw HTML is
// shown as text, only http(s)/mailto links are links, images are not loaded), unified diffs
// of edits, todo lists and clipped output.
import { structuredPatch } from 'diff'
import { Marked } from 'marked'

/** Longest tool output shown (the full text is in the session log). */
export const MAX_OUTPUT_CHARS = 20_000
/** Longest diff shown, in lines. */
export const MAX_DIFF_LINES = 600

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/gu, (c) => `&#${c.charCodeAt(0)};`)
}

const SAFE_HREF = /^(?:https?:|mailto:)/iu

const markdown = new Marked({ gfm: true, async: false })
markdown.use({
  renderer: {
    // Raw HTML in model output is text, never markup.
    html: ({ text }) => escapeHtml(text),
    image: ({ href, text }) => `<span class="img">[image: ${escapeHtml(text || href)}]</span>`,
    link({ href, title, tokens }) {
      const inner = this.parser.parseInline(tokens)
      if (!SAFE_HREF.test(href)) return inner
      const titled = title ? ` title="${escapeHtml(title)}"` : ''
      return `<a href="${escapeHtml(href)}"${titled} rel="noopener noreferrer">${inner}</a>`
    },
  },
})

/** Markdown as HTML (headings, lists, tables, code), with everything untrusted made inert. */
export function markdownHtml(text: string): string {
  return `<div class="md">${markdown.parse(text) as string}</div>`
}

/** Text as a preformatted block, clipped to {@link MAX_OUTPUT_CHARS} with a note. */
export function preHtml(text: string, cls = ''): string {
  const shown =
    text.length <= MAX_OUTPUT_CHARS
      ? escapeHtml(text)
      : `${escapeHtml(text.slice(0, MAX_OUTPUT_CHARS))}\n<span class="note">… ${text.length - MAX_OUTPUT_CHARS} more characters (the full text is in the session log)</span>`
  return `<pre${cls ? ` class="${cls}"` : ''}>${shown}</pre>`
}

/** Counts of a diff's changed lines. */
export interface DiffStats {
  added: number
  removed: number
}

/**
 * A unified diff of `before` → `after` as a table of lines (`+` added, `-` removed, context
 * around), hunks separated; clipped at {@link MAX_DIFF_LINES} with a note.
 */
export function diffHtml(before: string, after: string): { html: string; stats: DiffStats } {
  const patch = structuredPatch('before', 'after', before, after, undefined, undefined, { context: 3 })
  const rows: string[] = []
  const stats: DiffStats = { added: 0, removed: 0 }
  let shown = 0
  let hidden = 0
  patch.hunks.forEach((hunk, i) => {
    if (i > 0) rows.push('<tr class="gap"><td class="sign">⋯</td><td></td></tr>')
    for (const line of hunk.lines) {
      const sign = line[0]
      if (sign === '\\') continue // "\ No newline at end of file"
      if (sign === '+') stats.added++
      if (sign === '-') stats.removed++
      if (shown >= MAX_DIFF_LINES) {
        hidden++
        continue
      }
      shown++
      const cls = sign === '+' ? 'add' : sign === '-' ? 'del' : 'ctx'
      rows.push(
        `<tr class="${cls}"><td class="sign">${sign === ' ' ? '' : escapeHtml(sign ?? '')}</td><td>${escapeHtml(line.slice(1))}</td></tr>`,
      )
    }
  })
  if (hidden > 0)
    rows.push(
      `<tr class="gap"><td class="sign">⋯</td><td class="note">${hidden} more lines (the full text is in the session log)</td></tr>`,
    )
  if (rows.length === 0)
    rows.push('<tr class="ctx"><td class="sign"></td><td class="note">(no change)</td></tr>')
  return { html: `<table class="diff">${rows.join('')}</table>`, stats }
}

/** `+3 −1`, for a diff's header. */
export function statsHtml(stats: DiffStats): string {
  return `<span class="stat"><span class="plus">+${stats.added}</span> <span class="minus">−${stats.removed}</span></span>`
}

/** One item of a todo list (as `todo_write` and `todo/write` hold it). */
export interface TodoLike {
  content: string
  status: string
  activeForm?: string
}

const TODO_MARK: Record<string, string> = {
  completed: '☑',
  in_progress: '◐',
  pending: '☐',
  cancelled: '☒',
}

/** A todo list as a checklist: done items struck through, the one in progress marked. */
export function todoHtml(todos: readonly TodoLike[]): string {
  if (todos.length === 0) return '<div class="todos empty">(the list is empty)</div>'
  const items = todos.map(
    (t) =>
      `<li class="todo ${escapeHtml(t.status)}"><span class="mark">${TODO_MARK[t.status] ?? '•'}</span> ${escapeHtml(t.status === 'in_progress' && t.activeForm ? t.activeForm : t.content)}</li>`,
  )
  const done = todos.filter((t) => t.status === 'completed').length
  return `<div class="todos"><div class="who">todo list · ${done}/${todos.length} done</div><ul>${items.join('')}</ul></div>`
}

/** Parses a tool call's raw arguments; `undefined` when they are not a JSON object. */
export function argumentsOf(raw: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(raw)
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined
  } catch {
    return undefined
  }
}

/** Raw JSON pretty-printed (else as sent). */
export function prettyJson(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2)
  } catch {
    return raw
  }
}

/** `1.2 s`, `3 min 4 s`, `1 h 2 min`. */
export function durationText(ms: number): string {
  const s = Math.round(ms / 1000)
  if (ms < 1000) return `${Math.max(0, Math.round(ms))} ms`
  if (s < 60) return `${(ms / 1000).toFixed(1)} s`
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`
}

/** `$0.0123` (more digits for smaller amounts). */
export function usdText(usd: number): string {
  if (usd === 0) return '$0'
  return usd >= 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toPrecision(3)}`
}
