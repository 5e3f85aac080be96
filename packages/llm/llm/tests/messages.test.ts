import {
  assistantMessageSchema,
  findUnansweredToolCalls,
  LlmError,
  type Message,
  messageText,
  type ToolCallId,
  text,
  toolResultMessageSchema,
  withAnsweredToolCalls,
} from '@keel/llm'
import { describe, expect, it } from 'vitest'

describe('messages', () => {
  it('messageText joins text blocks only', () => {
    expect(
      messageText({
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'hmm' },
          text('a'),
          { type: 'tool-call', id: 'c' as never, name: 'n', arguments: '{' },
          text('b'),
        ],
      }),
    ).toBe('ab')
  })

  it('schemas are strict and keep raw tool arguments as text', () => {
    const raw = '{"path": "a.ts", "unterminated'
    const ok = assistantMessageSchema.safeParse({
      role: 'assistant',
      content: [{ type: 'tool-call', id: 'c1', name: 'read_file', arguments: raw }],
    })
    expect(ok.success).toBe(true)
    expect(assistantMessageSchema.safeParse({ role: 'assistant', content: [], extra: 1 }).success).toBe(false)
    expect(
      toolResultMessageSchema.safeParse({ role: 'tool', toolCallId: '', toolName: 'x', content: [] }).success,
    ).toBe(false)
  })
})

describe('LlmError', () => {
  it('derives a stable code and retryability from its kind', () => {
    const e = new LlmError('rate-limit', 'slow down', { status: 429, retryAfterMs: 2000 })
    expect(e.code).toBe('LLM_RATE_LIMIT')
    expect(e.retryable).toBe(true)
    expect(e.retryAfterMs).toBe(2000)
    expect(new LlmError('context-overflow', 'too long', { status: 400 }).retryable).toBe(false)
    expect(new LlmError('stream-cut', 'cut').retryable).toBe(true)
    expect(new LlmError('auth', 'bad key').code).toBe('LLM_AUTH')
  })
})

describe('findUnansweredToolCalls', () => {
  const call = (id: string) => ({
    type: 'tool-call' as const,
    id: id as ToolCallId,
    name: 'bash',
    arguments: '{}',
  })
  const result = (id: string): Message => ({
    role: 'tool',
    toolCallId: id as ToolCallId,
    toolName: 'bash',
    content: [{ type: 'text', text: 'ok' }],
  })
  it('finds calls not answered before the next non-tool message, and at the end', () => {
    const messages: Message[] = [
      { role: 'user', content: [{ type: 'text', text: 'go' }] },
      { role: 'assistant', content: [call('a'), call('b')] },
      result('a'),
      { role: 'user', content: [{ type: 'text', text: 'again' }] },
      { role: 'assistant', content: [call('c')] },
    ]
    expect(findUnansweredToolCalls(messages)).toEqual([
      { messageIndex: 1, id: 'b', name: 'bash' },
      { messageIndex: 4, id: 'c', name: 'bash' },
    ])
    expect(findUnansweredToolCalls([...messages.slice(0, 3), result('b')])).toEqual([])
  })

  it('reports a repeated id once, where it first appears, named by its last block', () => {
    const messages: Message[] = [
      {
        role: 'assistant',
        content: [call('a'), { ...call('b'), name: 'read' }, { ...call('a'), name: 'grep' }],
      },
      result('b'),
      { role: 'assistant', content: [call('c'), call('c')] },
      result('c'),
    ]
    expect(findUnansweredToolCalls(messages)).toEqual([{ messageIndex: 0, id: 'a', name: 'grep' }])
  })

  it('ignores tool messages that follow no call, and answers only within the run after the call', () => {
    const messages: Message[] = [
      result('x'),
      { role: 'assistant', content: [call('x')] },
      { role: 'user', content: [{ type: 'text', text: 'later' }] },
      result('x'),
    ]
    expect(findUnansweredToolCalls(messages)).toEqual([{ messageIndex: 1, id: 'x', name: 'bash' }])
  })

  it('withAnsweredToolCalls inserts answers after the existing tool messages of the call', () => {
    const messages: Message[] = [
      { role: 'assistant', content: [call('a'), call('b')] },
      result('a'),
      { role: 'user', content: [{ type: 'text', text: 'next' }] },
    ]
    const fixed = withAnsweredToolCalls(messages, { errorCode: 'X', text: (c) => `missing ${c.id}` })
    expect(fixed.map((m) => (m.role === 'tool' ? `tool ${m.toolCallId}` : m.role))).toEqual([
      'assistant',
      'tool a',
      'tool b',
      'user',
    ])
    expect(fixed[2]).toMatchObject({ isError: true, content: [{ text: 'Error [X]: missing b' }] })
    expect(findUnansweredToolCalls(fixed)).toEqual([])
    const whole = [...messages.slice(0, 2), result('b')]
    expect(withAnsweredToolCalls(whole, { errorCode: 'X', text: () => '' })).toBe(whole)
  })
})
