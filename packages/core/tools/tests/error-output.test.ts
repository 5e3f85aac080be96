import { errorResultText } from '@keel/llm'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool, errorOutput, parseToolInput } from '../src/index.js'

describe('errorOutput', () => {
  it('is an error output whose one text block is errorResultText, with its code', () => {
    expect(errorOutput('FILE_NOT_FOUND', 'a.ts does not exist.')).toEqual({
      content: [{ type: 'text', text: 'Error [FILE_NOT_FOUND]: a.ts does not exist.' }],
      isError: true,
      errorCode: 'FILE_NOT_FOUND',
    })
  })

  it("is the form the runtime's own errors take", () => {
    const tool = defineTool({
      name: 'echo',
      description: 'echo',
      inputSchema: z.strictObject({ text: z.string() }),
      annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
      call: async (input) => input.text,
    })
    const parsed = parseToolInput(tool, '{"text": 1}')
    expect(parsed.ok).toBe(false)
    if (parsed.ok) return
    expect(parsed.output.errorCode).toBe('TOOL_INPUT_INVALID')
    const [block] = parsed.output.content
    expect(block?.type === 'text' && block.text.startsWith(errorResultText('TOOL_INPUT_INVALID', ''))).toBe(
      true,
    )
  })
})
