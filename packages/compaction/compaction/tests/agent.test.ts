import { createAgent, usePlugin } from '@keel/agent'
import type { RecordedRequest, ScriptedResponse } from '@keel/scripted-server'
import { Session } from '@keel/session'
import { todoPlugin, todoProjection } from '@keel/todo'
import { defineTool } from '@keel/tools'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { compactionPlugin, describeResult, runCompactCommand } from '../src/index.js'
import { filler, isSummaryRequest, lastText, messagesOf, onCleanup, serve } from './helpers.js'

/** A stand-in for @keel/fs's read_file: big outputs, same name and path argument. */
const readFile = defineTool({
  name: 'read_file',
  description: 'Reads a file.',
  inputSchema: z.strictObject({ path: z.string() }),
  annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
  async call({ path }) {
    return filler(8_000, `contents of ${path}`)
  },
})

/** Chars a chat request sends, /4: what the model was asked to read. */
function requestTokens(request: RecordedRequest): number {
  return Math.ceil(JSON.stringify(messagesOf(request)).length / 4)
}

const window = 6_000

describe('inside a real agent (beforeStep trigger)', () => {
  it('compacts automatically before a step, keeps every request under the window and the todo list intact', async () => {
    const steps: ScriptedResponse[] = [
      {
        toolCalls: [
          {
            name: 'todo_write',
            arguments: {
              todos: [
                { id: 'read', content: 'Read the four files', status: 'in_progress' },
                { id: 'report', content: 'Report', status: 'pending' },
              ],
            },
          },
        ],
      },
      ...['a.ts', 'b.ts', 'c.ts', 'd.ts'].map((path) => ({
        text: filler(3_000, `thinking about ${path}`),
        toolCalls: [{ name: 'read_file', arguments: { path } }],
      })),
      { text: 'All four read.' },
    ]
    let next = 0
    const { server, llm } = await serve({
      handler: (request) =>
        isSummaryRequest(request)
          ? { text: `## Goal\nRead four files (summary ${request.index}).` }
          : steps[next++]!,
    })
    const session = Session.create('agent-auto')
    const plugin = compactionPlugin({ llm })
    const displayed: string[] = []
    const agent = await createAgent({
      llm,
      session,
      cwd: process.cwd(),
      systemPrompt: 'You are careful.',
      plugins: [usePlugin(plugin, { contextWindow: window, maxPerTurn: 10 }), todoPlugin],
      tools: [readFile],
      observers: [{ onDisplay: (n) => displayed.push(`${n.source} ${n.kind}: ${n.text}`) }],
    })
    onCleanup(() => agent.close())
    expect(plugin.compactor).toBeDefined()

    const result = await agent.send('Read a.ts, b.ts, c.ts and d.ts, then report.')

    expect(result).toMatchObject({ reason: 'completed', text: 'All four read.' })
    const starts = session.events.filter((e) => e.type === 'compaction/start')
    expect(starts.length).toBeGreaterThan(0)
    for (const start of starts) {
      expect(start.data).toMatchObject({ trigger: 'auto', turn: 1 })
      // placed between steps: the event before it ends a step, a step starts after the compaction
      expect(session.events[start.seq - 1]!.type).toBe('step/end')
    }
    const ends = session.events.filter((e) => e.type === 'compaction/end')
    expect(ends).toHaveLength(starts.length)
    expect(ends.every((e) => e.type === 'compaction/end' && e.data.error === undefined)).toBe(true)
    expect(session.events.some((e) => e.type === 'compaction/prune')).toBe(true)
    const summaryRequests = server.requests.filter(isSummaryRequest)
    expect(summaryRequests.length).toBeGreaterThan(0)
    expect(lastText(summaryRequests[0]!)).toContain('[>] Read the four files')
    expect(lastText(summaryRequests[0]!)).toContain('Files read')
    // every model request of the turn stayed under the window
    for (const request of server.requests.filter((r) => !isSummaryRequest(r))) {
      expect(requestTokens(request)).toBeLessThan(window)
    }
    // the request after the first compaction no longer carries a.ts's output
    const agentRequests = server.requests.filter((r) => !isSummaryRequest(r))
    expect(JSON.stringify(messagesOf(agentRequests.at(-1)!))).not.toContain('contents of a.ts')
    expect(session.project(todoProjection).map((t) => t.id)).toEqual(['read', 'report'])
    expect(displayed.some((d) => d.startsWith('@keel/compaction compaction: Context compacted (auto)'))).toBe(
      true,
    )
  })

  it('compact() and the /compact command run a manual compaction between turns (turn null)', async () => {
    let next = 0
    const answers = [filler(4_000, 'first answer'), filler(4_000, 'second answer')]
    const { server, llm } = await serve({
      handler: (request) =>
        isSummaryRequest(request) ? { text: 'Summary of both answers.' } : { text: answers[next++] ?? 'ok' },
    })
    const session = Session.create('agent-manual')
    const plugin = compactionPlugin({ llm })
    const agent = await createAgent({
      llm,
      session,
      cwd: process.cwd(),
      plugins: [usePlugin(plugin, { contextWindow: 100_000 })],
    })
    onCleanup(() => agent.close())
    await agent.send('First question.')
    await agent.send('Second question.')
    await agent.send('Third question.')

    const reply = await runCompactCommand(plugin.compactor!, '  Keep the answers short.  ')
    expect(reply).toMatch(
      /^Compacted: [\d,]+ → [\d,]+ tokens; 0 output\(s\) pruned, older history summarized\.$/,
    )
    const start = session.events.findLast((e) => e.type === 'compaction/start')!
    expect(start.data).toMatchObject({
      turn: null,
      trigger: 'manual',
      instructions: 'Keep the answers short.',
    })
    expect(lastText(server.requests.at(-1)!)).toContain('focus on: Keep the answers short.')

    // the next turn sees the summary in place of the first exchanges
    await agent.send('Fourth question.')
    const seen = JSON.stringify(messagesOf(server.requests.at(-1)!))
    expect(seen).toContain('[Context compacted:')
    expect(seen).not.toContain('first answer')
    expect(describeResult(await plugin.compact())).toMatch(/^Compact/)
  })

  it('refuses to set up without a model for summaries (until the agent provides ctx.llm)', async () => {
    const { llm } = await serve()
    const attempt = createAgent({
      llm,
      session: Session.create('no-llm'),
      cwd: process.cwd(),
      plugins: [compactionPlugin()],
    })
    await expect(attempt).rejects.toMatchObject({
      code: 'PLUGIN_SETUP_FAILED',
      message: expect.stringContaining('pass compactionPlugin({ llm })'),
    })
    await expect(compactionPlugin().compact()).rejects.toMatchObject({ code: 'COMPACTION_CONFIG_INVALID' })
  })
})
