// The summary is written from what the model saw, and its request repeats the agent's.
import type { ScriptedResponse } from '@keel/scripted-server'
import { defineTool } from '@keel/tools'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { filler, readFile } from './helpers.js'
import { agentRequests, isSummary, realAgent } from './real-agent.js'

/** A test run whose long output hides the one line that matters. */
const runTests = defineTool({
  name: 'run_tests',
  description: 'Runs the tests.',
  inputSchema: z.strictObject({}),
  annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
  call: async () =>
    `${filler(2_000, 'PASS')}\nFAIL parser.test.ts: expected 42, got 41\n${filler(2_000, 'PASS')}`,
})

function steps(): ScriptedResponse[] {
  return [
    { toolCalls: [{ name: 'run_tests', arguments: {} }] },
    { text: filler(1_200, 'thinking'), toolCalls: [{ name: 'read_file', arguments: { path: 'a.ts' } }] },
    { text: filler(1_200, 'thinking more'), toolCalls: [{ name: 'read_file', arguments: { path: 'b.ts' } }] },
    { text: 'The parser is off by one.' },
  ]
}

describe('what the summary reads', () => {
  it('summarizes the outputs as the model saw them, not this compaction’s own placeholders', async () => {
    const script = steps()
    let next = 0
    const { server, agent, session } = await realAgent({
      id: 'seen-outputs',
      server: {
        promptCache: true,
        handler: (request) => (isSummary(request) ? { text: '## Goal\nFix the parser.' } : script[next++]!),
      },
      compaction: { contextWindow: 40_000 },
      tools: [runTests as never, readFile as never],
    })
    expect(await agent.send('Run the tests, then read a.ts and b.ts.')).toMatchObject({ reason: 'completed' })

    const reply = await agent.runCommand('compact')
    expect(reply).toMatch(/^Compacted: .* output\(s\) pruned, older history summarized\.$/)
    const summaryRequest = server.requests.find(isSummary)!
    const sent = JSON.stringify(summaryRequest.body!.messages)
    expect(sent).toContain('expected 42, got 41')
    expect(sent).not.toContain('[Output pruned by compaction')
    // the prunes of this compaction were applied after the summary: outside the range they stay
    const end = session.events.findLast((e) => e.type === 'compaction/end')!
    expect(end.data).toMatchObject({ summarized: true, summaryCalls: 1 })
    expect(end.type === 'compaction/end' && end.data.error).toBeUndefined()
  })

  it('sends the agent’s prefix — system, tools, messages up to the range — so the prefix cache serves it', async () => {
    const script = steps()
    let next = 0
    const { server, agent, session } = await realAgent({
      id: 'seen-prefix',
      server: {
        promptCache: true,
        handler: (request) => (isSummary(request) ? { text: '## Goal\nFix the parser.' } : script[next++]!),
      },
      compaction: { contextWindow: 40_000 },
      tools: [runTests as never, readFile as never],
    })
    await agent.send('Run the tests, then read a.ts and b.ts.')
    await agent.runCommand('compact')
    const last = agentRequests(server).at(-1)!.body!
    const summary = server.requests.find(isSummary)!.body!
    expect(summary.model).toBe(last.model)
    expect(summary.tools).toEqual(last.tools)
    const prefix = summary.messages!.slice(0, -1)
    const shared = Math.min(prefix.length, last.messages!.length)
    expect(shared).toBeGreaterThan(2)
    expect(prefix.slice(0, shared)).toEqual(last.messages!.slice(0, shared))
    // the provider's cache served most of it (the scripted server simulates DeepSeek's prefix cache)
    const logged = session.events.find((e) => e.type === 'compaction/summary')!
    const usage = logged.type === 'compaction/summary' ? logged.data.usage! : (null as never)
    expect(usage.cacheHitTokens).toBeGreaterThan(0.8 * usage.inputTokens)
  })
})
