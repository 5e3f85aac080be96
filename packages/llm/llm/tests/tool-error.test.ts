import { errorResultText, type Message, messageText, type ToolCallId, withAnsweredToolCalls } from '@keel/llm'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

const codeArb = fc.stringMatching(/^[A-Z][A-Z0-9_]{0,30}$/)

describe('errorResultText', () => {
  it('spells the one form the model reads: Error [<code>]: <message>', () => {
    expect(errorResultText('TOOL_ABORTED', 'bash was not run: the turn was aborted.')).toBe(
      'Error [TOOL_ABORTED]: bash was not run: the turn was aborted.',
    )
  })

  it('keeps the code recoverable from the text whatever the message holds', () => {
    fc.assert(
      fc.property(codeArb, fc.string(), (code, message) => {
        const text = errorResultText(code, message)
        const match = /^Error \[([A-Z][A-Z0-9_]*)\]: /.exec(text)
        expect(match?.[1]).toBe(code)
        expect(text.slice(match?.[0].length)).toBe(message)
      }),
      { seed: 18 },
    )
  })

  it('is what withAnsweredToolCalls writes for an unanswered call', () => {
    const messages: Message[] = [
      {
        role: 'assistant',
        content: [{ type: 'tool-call', id: 'c1', name: 'read', arguments: '{}' }],
      } as Message,
    ]
    const answered = withAnsweredToolCalls(messages, {
      errorCode: 'TOOL_INTERRUPTED',
      text: (call) => `${call.name} did not finish.`,
    })
    const tool = answered[1]
    expect(tool?.role).toBe('tool')
    if (tool?.role !== 'tool') return
    expect(tool.toolCallId).toBe('c1' as ToolCallId)
    expect(messageText(tool)).toBe(errorResultText('TOOL_INTERRUPTED', 'read did not finish.'))
  })
})
