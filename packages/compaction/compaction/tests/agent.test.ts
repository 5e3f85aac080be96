import { createAgent, usePlugin } from '@keel/agent'
import type { RecordedRequest, ScriptedResponse } from '@keel/scripted-server'
import { Session } from '@keel/session'
import { todoPlugin, todoProjection } from '@keel/todo'
import { defineTool } from '@keel/tools'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { compactionPlugin, describeResult } from '../src/index.js'
import {
  filler,
  isSummaryRequest,
  lastText,
  messagesOf,
  onCleanup,
  readFile,
  readFourFilesTurn,
  serve,
  toolPairsIntact,
} from './helpers.js'

/** Chars a chat request sends, /4: what the model was asked to read. */
function requestTokens(request: RecordedRequest): number {
  return Math.ceil(JSON.stringify(messagesOf(request)).length / 4)
}

const window = 6_000

describe('inside a real agent (beforeStep trigger)', () => {
  it('compacts automatically before a step, keeps every request under the window and the todo list intact', async () => {
    const steps: ScriptedResponse[] = [...readFourFilesTurn()]
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
    expect(agent.services.get('compaction.run')).toBeDefined()

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

  it('/compact through agent.runCommand and compact() run a manual compaction between turns (turn null)', async () => {
    let next = 0
    const answers = [filler(4_000, 'first answer'), filler(4_000, 'second answer')]
    const { server, llm } = await serve({
      handler: (request) =>
        isSummaryRequest(request) ? { text: 'Summary of both answers.' } : { text: answers[next++] ?? 'ok' },
    })
    const session = Session.create('agent-manual')
    // no model given: the summaries are written with the agent's own adapter (ctx.llm)
    const plugin = compactionPlugin()
    const shown: string[] = []
    const agent = await createAgent({
      llm,
      session,
      cwd: process.cwd(),
      plugins: [usePlugin(plugin, { contextWindow: 100_000 })],
      observers: [{ onDisplay: (n) => shown.push(n.text) }],
    })
    onCleanup(() => agent.close())
    await agent.send('First question.')
    await agent.send('Second question.')
    await agent.send('Third question.')

    expect(agent.commands()).toContainEqual({
      name: 'compact',
      plugin: '@keel/compaction',
      description: 'compact the conversation now',
      usage: '[what the summary should focus on]',
    })
    const reply = await agent.runCommand('compact', '  Keep the answers short.  ')
    expect(reply).toMatch(
      /^Compacted: [\d,]+ → [\d,]+ tokens; 0 output\(s\) pruned, older history summarized\.$/,
    )
    // the command's answer says it; no notice says it again
    expect(shown.filter((t) => /compacted/iu.test(t))).toEqual([])
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
    // a compaction that changed nothing says so (not "Compacted: N → N tokens")
    expect(describeResult(await agent.services.get('compaction.run')!.compact())).toMatch(
      /^Nothing was compacted \(about [\d,]+ tokens\): no old tool output to prune/,
    )
    // each /compact is a logged command run with exactly one answer
    const runs = session.events.filter((e) => e.type === 'command/run')
    expect(runs.map((e) => e.data)).toEqual([
      { commandId: expect.any(String), name: 'compact', args: '  Keep the answers short.  ', source: 'user' },
    ])
    expect(session.events.filter((e) => e.type === 'command/done').map((e) => e.data)).toEqual([
      { commandId: runs[0]!.data.commandId, kind: 'success', text: reply },
    ])
  })

  it('/compact while one runs is refused', async () => {
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const { llm } = await serve({
      handler: async (request) => {
        if (isSummaryRequest(request)) await held
        return { text: isSummaryRequest(request) ? 'Summary.' : filler(4_000, 'answer') }
      },
    })
    const session = Session.create('agent-busy')
    const agent = await createAgent({
      llm,
      session,
      cwd: process.cwd(),
      plugins: [usePlugin(compactionPlugin(), { contextWindow: 100_000 })],
    })
    onCleanup(() => agent.close())
    await agent.send('One.')
    await agent.send('Two.')
    const first = agent.runCommand('compact', '')
    // the first compaction waits for its summary: a second /compact is answered, not queued
    await expect.poll(() => session.events.some((e) => e.type === 'compaction/start')).toBe(true)
    expect(await agent.runCommand('compact', '')).toBe(
      'A compaction is already running; try again when it ends.',
    )
    release()
    expect(await first).toMatch(/^Compacted: /)
  })

  it('/compact while a tool of a running turn waits is placed in that turn and keeps the call paired', async () => {
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    let entered: () => void = () => {}
    const inTool = new Promise<void>((resolve) => {
      entered = resolve
    })
    const slow = defineTool({
      name: 'slow',
      description: 'Takes its time.',
      inputSchema: z.strictObject({}),
      annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
      async call() {
        entered()
        await held
        return 'slow done'
      },
    })
    let next = 0
    const { llm } = await serve({
      handler: (request) => {
        if (isSummaryRequest(request)) return { text: 'Summary.' }
        next++
        return next === 3
          ? { text: filler(3_000, 'calling'), toolCalls: [{ name: 'slow', arguments: {} }] }
          : { text: filler(4_000, `answer ${next}`) }
      },
    })
    const session = Session.create('agent-mid-turn')
    const agent = await createAgent({
      llm,
      session,
      cwd: process.cwd(),
      tools: [slow],
      plugins: [usePlugin(compactionPlugin(), { contextWindow: 100_000 })],
    })
    onCleanup(() => agent.close())
    await agent.send('One.')
    await agent.send('Two.')
    const third = agent.send('Three.')
    await inTool

    expect(await agent.runCommand('compact', '')).toMatch(/older history summarized/)
    release()
    expect(await third).toMatchObject({ turn: 3, reason: 'completed' })

    const start = session.events.find((e) => e.type === 'compaction/start')!
    expect(start.data).toMatchObject({ turn: 3, trigger: 'manual' })
    // between the running call and its result (inside the logged command run), which still
    // answers it on the surface
    expect(session.events.slice(start.seq - 2, start.seq).map((e) => e.type)).toEqual([
      'tool/call',
      'command/run',
    ])
    expect(toolPairsIntact(session)).toBe(true)
    expect(session.deriveMessages().map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'tool',
      'assistant',
    ])
  })
})
