// Oversized messages: one user message or tool output larger than half the threshold
// leaves no room for anything else and, in the recent tail, is never pruned or summarized,
// so every later request overflows. Such a node is cut to its beginning and end, wherever
// it is; the full text stays in the log.
import type { ImageBlock, Message, TextBlock } from '@keel/llm'
import type { Session, SessionEventMap, SessionSeq } from '@keel/session'
import { INFORMATIONAL } from './guard.js'
import type { SurfaceView } from './prune.js'
import { SUMMARY_SOURCE } from './summarize.js'
import { CHARS_PER_TOKEN, estimateMessageTokens, formatCount } from './tokens.js'

/** One oversized node and what replaces it. */
export type CutCandidate = {
  readonly seq: SessionSeq
  /** Its index in the view. */
  readonly index: number
  readonly tokens: number
  readonly keptTokens: number
} & (
  | { readonly type: 'user/message'; readonly data: SessionEventMap['user/message'] }
  | { readonly type: 'tool/result'; readonly data: SessionEventMap['tool/result'] }
)

/** Keeps the first two thirds and the last third of `keepChars`, with the notice between. */
function cutText(text: string, keepChars: number, notice: (cut: number) => string): string {
  if (text.length <= keepChars) return text
  const head = Math.ceil((keepChars * 2) / 3)
  const tail = keepChars - head
  return `${text.slice(0, head)}\n\n${notice(text.length - keepChars)}\n\n${tail > 0 ? text.slice(-tail) : ''}`
}

function cutContent<T extends TextBlock | ImageBlock>(
  content: readonly T[],
  keepChars: number,
  notice: (cut: number) => string,
): Array<TextBlock | ImageBlock> {
  const text = content
    .filter((b): b is Extract<T, TextBlock> => b.type === 'text')
    .map((b) => b.text)
    .join('\n\n')
  const images = content.filter((b): b is Extract<T, ImageBlock> => b.type === 'image')
  return [{ type: 'text', text: cutText(text, keepChars, notice) }, ...images]
}

/**
 * Every user message (not a summary) and tool output on the surface whose estimate is over
 * `limitTokens`, with the message that replaces it: about `limitTokens / 2` tokens of its
 * beginning and end around a notice naming the size and the log seq of the full text.
 */
export function planCuts(session: Session, view: SurfaceView, limitTokens: number): CutCandidate[] {
  const keepChars = Math.max(200, Math.floor(limitTokens / 2) * CHARS_PER_TOKEN)
  const candidates: CutCandidate[] = []
  view.messages.forEach((message, index) => {
    if (message.role !== 'user' && message.role !== 'tool') return
    const tokens = estimateMessageTokens(message)
    if (tokens <= limitTokens) return
    const seq = view.seqs[index]!
    const event = session.events[seq]!
    const notice = (what: string) => (cut: number) =>
      `[… ${formatCount(cut)} characters cut by compaction: this ${what} was about ${formatCount(tokens)} tokens, more than the context can hold beside the rest of the conversation. Its beginning and end are shown; the full text is in the session log (seq ${seq}). …]`
    if (event.type === 'user/message' && message.role === 'user') {
      if (event.data.source === SUMMARY_SOURCE) return
      const content = cutContent(message.content, keepChars, notice('message'))
      const data: SessionEventMap['user/message'] = { ...event.data, message: { role: 'user', content } }
      candidates.push({
        seq,
        index,
        tokens,
        keptTokens: estimateMessageTokens(data.message),
        type: 'user/message',
        data,
      })
    } else if (event.type === 'tool/result' && message.role === 'tool') {
      const content = cutContent(message.content, keepChars, notice(`${message.toolName} output`))
      const data: SessionEventMap['tool/result'] = { ...event.data, message: { ...message, content } }
      candidates.push({
        seq,
        index,
        tokens,
        keptTokens: estimateMessageTokens(data.message),
        type: 'tool/result',
        data,
      })
    }
  })
  return candidates.filter((c) => c.keptTokens < c.tokens)
}

/** `view` with every cut applied in memory (same seqs): what a summary request would send. */
export function withCuts(view: SurfaceView, cuts: readonly CutCandidate[]): SurfaceView {
  if (cuts.length === 0) return view
  const messages: Message[] = [...view.messages]
  for (const cut of cuts) messages[cut.index] = cut.data.message
  return { seqs: view.seqs, messages }
}

/**
 * Applies one cut: `compaction/prune` with `keptTokens`, then the replacing node. Returns
 * false, appending nothing, when the node is no longer on the surface (a summary replaced it).
 */
export function applyCut(session: Session, start: SessionSeq, cut: CutCandidate): boolean {
  if (!session.isOnSurface(cut.seq)) return false
  const range = { startSeq: cut.seq, endSeq: cut.seq }
  session.append(
    'compaction/prune',
    { start, range, shadowedSeqs: [cut.seq], tokens: cut.tokens, keptTokens: cut.keptTokens },
    INFORMATIONAL,
  )
  const replace = { surfaceOp: { op: 'replace', ...range } as const, sourceEventSeqs: [cut.seq] }
  if (cut.type === 'user/message') session.append('user/message', cut.data, replace)
  else session.append('tool/result', cut.data, replace)
  return true
}
