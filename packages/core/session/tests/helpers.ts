import type { SessionSeq, ToolCallId } from '@keel/session'

export const seq = (n: number) => n as SessionSeq
export const callId = (id: string) => id as ToolCallId
export const userText = (text: string) => ({
  message: { role: 'user' as const, content: [{ type: 'text' as const, text }] },
})
export const stream = {
  provider: 'test',
  model: 'm',
  startedAt: 1,
  endedAt: 2,
  chunks: 1,
  finishReason: 'stop' as const,
}
export const assistantText = (turn: number, step: number, text: string) => ({
  turn,
  step,
  message: { role: 'assistant' as const, content: [{ type: 'text' as const, text }] },
  stream,
})
export const toolResult = (turn: number, step: number, id: string, text = 'ok') => ({
  turn,
  step,
  message: {
    role: 'tool' as const,
    toolCallId: callId(id),
    toolName: 'echo',
    content: [{ type: 'text' as const, text }],
  },
})
