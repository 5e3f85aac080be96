import type { Message, ToolResultMessage } from '@keel/llm'
import type { Session, SessionEventMap, SessionSeq } from '@keel/session'
import { INFORMATIONAL } from './guard.js'
import { estimateMessageTokens, formatCount } from './tokens.js'

/** The current surface as parallel arrays: seqs and messages, in surface order. */
export interface SurfaceView {
  readonly seqs: readonly SessionSeq[]
  readonly messages: readonly Message[]
}

/** Reads the surface once (O(surface)). */
export function viewSurface(session: Session): SurfaceView {
  return { seqs: session.surfaceSeqs(), messages: session.deriveMessages().slice() }
}

/**
 * The index of the first node of the protected recent tail: the shortest suffix whose
 * estimate reaches `keepTokens`, widened back so it never starts at a tool result (a cut
 * there would separate a result from the call that asked for it). Nodes before it may be
 * compacted. Returns `messages.length` when `keepTokens` is 0.
 */
export function protectedTailStart(view: SurfaceView, keepTokens: number): number {
  const { messages } = view
  let index = messages.length
  let kept = 0
  while (index > 0 && kept < keepTokens) {
    index--
    kept += estimateMessageTokens(messages[index]!)
  }
  while (index > 0 && index < messages.length && messages[index]!.role === 'tool') index--
  return index
}

/** One old tool output that can be pruned. */
export interface PruneCandidate {
  readonly seq: SessionSeq
  /** Estimated tokens of the output now on the surface. */
  readonly tokens: number
  /** Estimated tokens of the placeholder that replaces it. */
  readonly placeholderTokens: number
  readonly data: SessionEventMap['tool/result']
}

/**
 * The tool outputs before the protected tail worth pruning (estimated at `minTokens` or
 * more, and not a placeholder already), oldest first.
 */
export function planPrune(
  session: Session,
  view: SurfaceView,
  options: { keepRecentTokens: number; minTokens: number },
): PruneCandidate[] {
  const end = protectedTailStart(view, options.keepRecentTokens)
  const candidates: PruneCandidate[] = []
  for (let i = 0; i < end; i++) {
    const message = view.messages[i]!
    if (message.role !== 'tool') continue
    const tokens = estimateMessageTokens(message)
    if (tokens < options.minTokens) continue
    const seq = view.seqs[i]!
    const event = session.events[seq]!
    if (event.type !== 'tool/result') continue
    if (session.events[seq - 1]?.type === 'compaction/prune') continue
    const data = placeholderFor(event.data, seq, tokens)
    const placeholderTokens = estimateMessageTokens(data.message)
    if (placeholderTokens >= tokens) continue
    candidates.push({ seq, tokens, placeholderTokens, data })
  }
  return candidates
}

/** The `tool/result` that stands in for a pruned output: same call, turn, step and error code. */
export function placeholderFor(
  original: SessionEventMap['tool/result'],
  seq: number,
  tokens: number,
): SessionEventMap['tool/result'] {
  const source = original.message
  let chars = 0
  let images = 0
  for (const block of source.content) {
    if (block.type === 'text') chars += block.text.length
    else images++
  }
  const size = `${formatCount(chars)} characters${images > 0 ? ` and ${images} image(s)` : ''}, about ${formatCount(tokens)} tokens`
  const where = original.storedAside
    ? `The full output is stored at ${original.storedAside.path} and in the session log (seq ${seq}).`
    : `The full output is kept in the session log (seq ${seq}).`
  const text = `[Output pruned by compaction: ${source.toolName}${source.isError ? ' failed and' : ''} returned ${size}. ${where} Run the tool again if you need its content.]`
  const message: ToolResultMessage = {
    role: 'tool',
    toolCallId: source.toolCallId,
    toolName: source.toolName,
    content: [{ type: 'text', text }],
  }
  if (source.isError) message.isError = true
  const data: SessionEventMap['tool/result'] = { turn: original.turn, step: original.step, message }
  if (original.errorCode !== undefined) data.errorCode = original.errorCode
  if (original.storedAside !== undefined) data.storedAside = original.storedAside
  return data
}

/**
 * Prunes one output: `compaction/prune`, then the `tool/result` rewrite replacing it.
 * Returns false, appending nothing, when the output is no longer on the surface.
 */
export function applyPrune(session: Session, start: SessionSeq, candidate: PruneCandidate): boolean {
  const { seq } = candidate
  // Planned from the surface a moment ago; another writer may have replaced it since.
  if (!session.isOnSurface(seq)) return false
  session.append(
    'compaction/prune',
    {
      start,
      range: { startSeq: seq, endSeq: seq },
      shadowedSeqs: [seq],
      tokens: candidate.tokens,
    },
    INFORMATIONAL,
  )
  session.append('tool/result', candidate.data, {
    surfaceOp: { op: 'replace', startSeq: seq, endSeq: seq },
    sourceEventSeqs: [seq],
  })
  return true
}
