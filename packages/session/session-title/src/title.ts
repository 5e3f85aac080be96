import { messageText, type SystemMessage, type UserMessage } from '@keel/llm'
import { type Projection, registerProjection, type SessionEvent } from '@keel/session'
import { eventValidators } from './events.generated.js'
import type { SessionTitleSource } from './events.js'

/** The longest title kept, in characters; a longer answer is cut at a word. */
export const MAX_TITLE_CHARS = 60

/** The instruction of every title request (its first message). */
export const TITLE_INSTRUCTION =
  'You write the title of a coding session: at most 6 words, in the language of the user, naming the task ' +
  '(not the assistant). No quotes, no trailing period, no "Title:". Answer with the title only.'

const USER_EXCERPT = 1500
const ANSWER_EXCERPT = 600

/** A session's title as the log says, and how many title requests were made. */
export interface TitleState {
  readonly title?: string
  readonly source?: SessionTitleSource
  /** `session/title-llm-request` events so far. */
  readonly requests: number
}

/** Folds one `session/title`: a person's title wins; a model title never replaces it. */
export function foldTitle(
  state: Pick<TitleState, 'title' | 'source'>,
  data: { title: string; source: SessionTitleSource },
): Pick<TitleState, 'title' | 'source'> {
  if (state.source === 'user' && data.source === 'model') return state
  return { title: data.title, source: data.source }
}

/** The title of a session and its requests, folded from the log. */
export const sessionTitleProjection: Projection<TitleState> = registerProjection<TitleState>({
  name: '@keel/session-title',
  init: () => ({ requests: 0 }),
  apply: (state, event) => {
    if (event.type === 'session/title') return { ...state, ...foldTitle(state, event.data) }
    if (event.type === 'session/title-llm-request') return { ...state, requests: state.requests + 1 }
    return state
  },
  checkpoint: { version: 1 },
})

/**
 * The title of stored events read outside a session (a listing reads only the title lines
 * of a log): each is validated like an append, and one that does not pass is skipped.
 */
export function titleOfEvents(events: Iterable<unknown>): string | undefined {
  let state: Pick<TitleState, 'title' | 'source'> = {}
  for (const raw of events) {
    if (typeof raw !== 'object' || raw === null || (raw as { type?: unknown }).type !== 'session/title')
      continue
    const parsed = eventValidators['session/title'].safeParse((raw as { data?: unknown }).data)
    if (parsed.success) state = foldTitle(state, parsed.data)
  }
  return state.title
}

/**
 * The one-line title of a model's answer: the first non-empty line, without a `Title:`
 * prefix, Markdown marks or quotes, whitespace collapsed, cut at a word to
 * {@link MAX_TITLE_CHARS}; `undefined` when nothing is left.
 */
export function cleanTitle(answer: string): string | undefined {
  const line = answer
    .split(/\r?\n/u)
    .map((l) => l.trim())
    .find((l) => l !== '')
  if (line === undefined) return undefined
  let title = line
    .replace(/^(?:#+\s*|[-*]\s+)/u, '')
    .replace(/^[^\p{L}\p{N}]*(?:session\s+)?title\s*[:：]\s*/iu, '')
  title = [...title].filter((c) => c >= ' ' && c !== '\u007f').join('')
  // Quotes, Markdown marks and a closing period, wrapped in each other in any order.
  for (let before = ''; before !== title; ) {
    before = title
    title = title.replace(/^[\s*_`"'“”‘’「」]+|[\s*_`"'“”‘’「」.。]+$/gu, '')
  }
  title = title.replace(/\s+/gu, ' ')
  if (title === '') return undefined
  const chars = [...title]
  if (chars.length <= MAX_TITLE_CHARS) return title
  const cut = chars.slice(0, MAX_TITLE_CHARS - 1).join('')
  const space = cut.lastIndexOf(' ')
  return `${(space >= MAX_TITLE_CHARS / 2 ? cut.slice(0, space) : cut).trimEnd()}…`
}

/** A person's title (`/title text`): one line, trimmed, at most 200 characters; `undefined` when empty. */
export function userTitle(text: string): string | undefined {
  const title = text.replace(/\s+/gu, ' ').trim()
  if (title === '') return undefined
  const chars = [...title]
  return chars.length <= 200 ? title : `${chars.slice(0, 199).join('')}…`
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`
}

/**
 * The title request's messages for the log so far: {@link TITLE_INSTRUCTION}, then the
 * first user message and the latest answer of the model, clipped; `undefined` while the
 * log holds no user text.
 */
export function titleMessages(
  events: readonly SessionEvent[],
): Array<SystemMessage | UserMessage> | undefined {
  let asked: string | undefined
  let answered: string | undefined
  for (const event of events) {
    if (asked === undefined && event.type === 'user/message') {
      const text = messageText(event.data.message).trim()
      if (text !== '') asked = text
    }
    if (event.type === 'assistant/message') {
      const text = messageText(event.data.message).trim()
      if (text !== '') answered = text
    }
  }
  if (asked === undefined) return undefined
  const excerpt = [
    `<user>\n${clip(asked, USER_EXCERPT)}\n</user>`,
    ...(answered === undefined ? [] : [`<assistant>\n${clip(answered, ANSWER_EXCERPT)}\n</assistant>`]),
    'The title of this session:',
  ].join('\n')
  return [
    { role: 'system', content: [{ type: 'text', text: TITLE_INSTRUCTION }] },
    { role: 'user', content: [{ type: 'text', text: excerpt }] },
  ]
}
