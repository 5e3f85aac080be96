import type { Session, SessionSeq, ToolCallId } from '@keel/session'

/** The stream record of a sample assistant message that started at `at` (ms). */
export const sampleStream = (at: number) => ({
  provider: 'sample',
  model: 'sample-model',
  responseId: `r-${at}`,
  startedAt: at,
  firstChunkAt: at + 5,
  endedAt: at + 40,
  finishReason: 'stop' as const,
  chunks: 12,
})

/** How many events {@link appendSampleTurn} appends. */
export const SAMPLE_TURN_EVENTS = 11

/**
 * Appends one realistic turn (user message, a step with a tool call and its result, a
 * final answer step, turn end: 11 events) to `session`. Used by the conformance suite,
 * the fault tests and the storage benchmarks. `text` pads the messages.
 */
export function appendSampleTurn(session: Session, text = 'hello'): void {
  const turn = session.lastTurn + 1
  const callId = `call-${turn}` as ToolCallId
  session.append('turn/start', { turn })
  session.append('user/message', {
    message: { role: 'user', content: [{ type: 'text', text: `${text} ${turn}` }] },
  })
  session.append('step/start', { turn, step: 1 })
  session.append('assistant/message', {
    turn,
    step: 1,
    message: {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: `thinking about ${text}` },
        { type: 'tool-call', id: callId, name: 'read_file', arguments: '{"path":"README.md"}' },
      ],
    },
    stream: sampleStream(turn * 1000),
    usage: { inputTokens: 1200, outputTokens: 40, totalTokens: 1240, cacheHitTokens: 1024 },
  })
  session.append('tool/call', { turn, step: 1, callId, name: 'read_file', arguments: '{"path":"README.md"}' })
  session.append('tool/result', {
    turn,
    step: 1,
    message: {
      role: 'tool',
      toolCallId: callId,
      toolName: 'read_file',
      content: [{ type: 'text', text: `# ${text}` }],
    },
  })
  session.append('step/end', { turn, step: 1 })
  session.append('step/start', { turn, step: 2 })
  session.append('assistant/message', {
    turn,
    step: 2,
    message: { role: 'assistant', content: [{ type: 'text', text: `The file says ${text}.` }] },
    stream: sampleStream(turn * 1000 + 100),
  })
  session.append('step/end', { turn, step: 2 })
  session.append('turn/end', { turn, reason: 'completed' })
}

/**
 * Appends at least one event of every core event type (and both surface operations) to a
 * fresh session: system, developer and user messages, a turn with a failed attempt, an
 * assistant message with a tool call, its result, a compaction replace, and turn end.
 */
export function appendEveryCoreEvent(session: Session): void {
  session.append('system/message', {
    message: { role: 'system', content: [{ type: 'text', text: 'Be brief.' }] },
  })
  session.append('developer/message', {
    message: { role: 'developer', content: [{ type: 'text', text: 'cwd is /tmp' }] },
    source: 'runtime',
  })
  appendSampleTurn(session, 'first')
  const turn = session.lastTurn + 1
  session.append('turn/start', { turn })
  session.append('user/message', {
    message: {
      role: 'user',
      content: [
        { type: 'text', text: 'unicode: é ü 😀 "quotes" \\ back\nslash' },
        { type: 'image', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
      ],
    },
    source: 'schedule/daily',
  })
  session.append('step/start', { turn, step: 1 })
  session.append('assistant/attempt', {
    turn,
    step: 1,
    attempt: 1,
    stream: { provider: 'sample', model: 'sample-model', startedAt: 5, endedAt: 6, chunks: 0 },
    error: { code: 'LLM_RATE_LIMITED', message: 'slow down' },
  })
  const callId = 'call-x' as ToolCallId
  session.append('assistant/message', {
    turn,
    step: 1,
    message: {
      role: 'assistant',
      content: [{ type: 'tool-call', id: callId, name: 'run', arguments: '{"cmd":' }],
    },
    stream: { provider: 'sample', model: 'sample-model', startedAt: 7, endedAt: 9, chunks: 3 },
    interrupted: true,
  })
  session.append('tool/call', { turn, step: 1, callId, name: 'run', arguments: '{"cmd":' })
  session.append('tool/result', {
    turn,
    step: 1,
    message: {
      role: 'tool',
      toolCallId: callId,
      toolName: 'run',
      content: [{ type: 'text', text: 'bad arguments' }],
      isError: true,
    },
    errorCode: 'TOOL_INPUT_INVALID',
    storedAside: { path: 'outputs/call-x.txt', chars: 12 },
  })
  session.append('step/end', { turn, step: 1 })
  session.append('turn/end', {
    turn,
    reason: 'error',
    error: { code: 'LLM_RATE_LIMITED', message: 'gave up' },
  })
  // A compaction: one user message replacing the whole surface so far.
  const surface = session.surfaceSeqs()
  session.append(
    'user/message',
    {
      message: { role: 'user', content: [{ type: 'text', text: 'summary of earlier work' }] },
      source: 'compaction',
    },
    {
      surfaceOp: { op: 'replace', startSeq: surface[0]!, endSeq: surface[surface.length - 1]! },
      sourceEventSeqs: surface as SessionSeq[],
    },
  )
}
