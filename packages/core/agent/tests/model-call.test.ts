import { defineTool } from '@keel/tools'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { AgentNotice } from '../src/index.js'
import { instantClock, rigsClosedAfterEach } from './helpers.js'

const open = rigsClosedAfterEach()

const writeFile = defineTool({
  name: 'write_file',
  description: 'Writes a file.',
  inputSchema: z.strictObject({ path: z.string(), content: z.string() }),
  annotations: { readOnly: false, destructive: true, openWorld: false, idempotent: true },
  async call(input) {
    return `wrote ${input.content.length} characters to ${input.path}`
  },
})

function notices(): { list: AgentNotice[]; onNotice(n: AgentNotice): void } {
  const list: AgentNotice[] = []
  return { list, onNotice: (n) => list.push(n) }
}

describe('idle timeout', () => {
  it('ends a stalled stream as a retryable failure; the retry completes the turn and close returns', async () => {
    const r = await open(
      [
        { text: 'I will stall now', chunking: { text: 4 }, fault: { type: 'stall', afterChunks: 2 } },
        { text: 'Second try.' },
      ],
      { adapter: { idleTimeoutMs: 300 }, clock: instantClock() },
    )
    const result = await r.agent.send('hi')
    expect(result).toMatchObject({ reason: 'completed', text: 'Second try.' })
    expect(r.events('assistant/attempt')[0]!.data.error.code).toBe('LLM_STREAM_IDLE')
    expect(r.events('llm/retry')).toHaveLength(1)
    await r.agent.close()
  })
})

describe('malformed SSE line', () => {
  it('is a transport failure retried like a cut stream', async () => {
    const r = await open(
      [
        { text: 'good start', chunking: { text: 5 }, fault: { type: 'malformed', afterChunks: 1 } },
        { text: 'Clean.' },
      ],
      { clock: instantClock() },
    )
    const result = await r.agent.send('hi')
    expect(result).toMatchObject({ reason: 'completed', text: 'Clean.' })
    expect(r.events('assistant/attempt')[0]!.data.error.code).toBe('LLM_MALFORMED_STREAM')
  })
})

describe('finish reasons', () => {
  it('sends max_tokens from the capability table, overridable per agent and per turn', async () => {
    const r = await open([{ text: 'a' }, { text: 'b' }], {
      adapter: { capabilities: { 'scripted-model': { maxOutputTokens: 1234 } } },
    })
    await r.agent.send('one')
    await r.agent.send('two', { maxTokens: 99 })
    expect(r.server.requests.map((q) => q.body!.max_tokens)).toEqual([1234, 99])
    const s = await open([{ text: 'c' }], { maxTokens: 777 })
    await s.agent.send('three')
    expect(s.server.requests[0]!.body!.max_tokens).toBe(777)
  })

  it('length without tool calls ends the turn output-limit and tells the user', async () => {
    const n = notices()
    const r = await open([{ text: 'The answer is cut o', finishReason: 'length' }], { observers: [n] })
    const result = await r.agent.send('write a lot')
    expect(result).toMatchObject({ reason: 'output-limit', text: 'The answer is cut o' })
    expect(result.error?.code).toBe('OUTPUT_LIMIT')
    expect(r.events('turn/end')[0]!.data.reason).toBe('output-limit')
    expect(n.list.map((x) => x.code)).toEqual(['OUTPUT_LIMIT'])
  })

  it('a tool call cut by the limit is answered TOOL_OUTPUT_LIMIT (not TOOL_INPUT_INVALID_JSON); complete calls run', async () => {
    const n = notices()
    const r = await open(
      [
        {
          toolCalls: [
            { id: 'whole', name: 'write_file', arguments: { path: 'a.txt', content: 'short' } },
            { id: 'cut', name: 'write_file', arguments: '{"path": "b.txt", "content": "very long cont' },
          ],
          finishReason: 'length',
        },
        { text: 'I will write it in parts.' },
      ],
      { tools: [writeFile], observers: [n], maxTokens: 50 },
    )
    const result = await r.agent.send('write two files')
    expect(result.reason).toBe('completed')
    const results = r.events('tool/result').map((e) => [e.data.message.toolCallId, e.data.errorCode])
    expect(results).toEqual([
      ['whole', undefined],
      ['cut', 'TOOL_OUTPUT_LIMIT'],
    ])
    const cut = JSON.stringify(r.events('tool/result')[1]!.data.message.content)
    expect(cut).toContain('max_tokens 50')
    expect(n.list[0]).toMatchObject({ code: 'OUTPUT_LIMIT', step: 1 })
  })

  it('content_filter ends the turn content-filter without running tools', async () => {
    const r = await open(
      [
        {
          toolCalls: [{ id: 'c', name: 'write_file', arguments: { path: 'x', content: 'y' } }],
          finishReason: 'content_filter',
        },
      ],
      { tools: [writeFile] },
    )
    const result = await r.agent.send('hm')
    expect(result.reason).toBe('content-filter')
    expect(r.events('tool/result')[0]!.data.errorCode).toBe('TOOL_CONTENT_FILTERED')
  })

  it('insufficient_system_resource is retried', async () => {
    const r = await open(
      [{ text: 'half', finishReason: 'insufficient_system_resource' }, { text: 'Whole.' }],
      {
        clock: instantClock(),
      },
    )
    const result = await r.agent.send('hi')
    expect(result).toMatchObject({ reason: 'completed', text: 'Whole.' })
    expect(r.events('assistant/attempt')[0]!.data.error.code).toBe('LLM_INSUFFICIENT_RESOURCES')
  })
})

describe('a paid response is kept', () => {
  it('a final failure keeps the adapter partial (LlmError.partial) as an interrupted message', async () => {
    const r = await open(
      [
        {
          text: 'Delivered words before the cut.',
          chunking: { text: 5 },
          fault: { type: 'cut', afterChunks: 3 },
        },
      ],
      {
        retry: { maxRetries: 0 },
      },
    )
    const result = await r.agent.send('hi')
    expect(result.reason).toBe('error')
    expect(result.error?.code).toBe('LLM_STREAM_CUT')
    const kept = r.events('assistant/message')[0]!.data
    expect(kept.interrupted).toBe(true)
    const kept0 = kept.message.content[0] as { type: string; text: string }
    expect(kept0.type).toBe('text')
    expect('Delivered words before the cut.'.startsWith(kept0.text)).toBe(true)
    expect(kept0.text.length).toBeGreaterThan(0)
    expect(result.text).toBe(kept0.text)
  })
})
