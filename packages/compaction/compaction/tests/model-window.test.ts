// Compaction judges the surface by the window of the model the agent runs, and keeps the
// request's output budget (max_tokens) free: the scripted server refuses, as DeepSeek does,
// any request whose prompt plus max_tokens is longer than the model's window.
import type { RecordedRequest, ScriptedResponse } from '@keel/scripted-server'
import { describe, expect, it } from 'vitest'
import { budgetOf, parseCompactionConfig } from '../src/index.js'
import { filler, readFile } from './helpers.js'
import { agentRequests, isSummary, realAgent } from './real-agent.js'

const WINDOW = 12_000

/** Every turn reads one file (about 2,000 tokens) after a long thought, then answers. */
function handler(request: RecordedRequest): ScriptedResponse {
  if (isSummary(request)) return { text: '## Goal\nRead the files one by one.' }
  const last = request.body?.messages?.at(-1)
  if (last?.role === 'tool') return { text: `Read it (${request.index}).` }
  return {
    text: filler(4_000, `plan ${request.index}`),
    toolCalls: [{ name: 'read_file', arguments: { path: `f${request.index}.ts` } }],
  }
}

async function longSession(options: {
  id: string
  compaction: Record<string, unknown>
  agent: Record<string, unknown>
}) {
  const rig = await realAgent({
    id: options.id,
    server: { contextWindow: WINDOW, handler },
    compaction: options.compaction,
    tools: [readFile as never],
    agent: { model: 'small-12k', maxTokens: 1_000, ...options.agent },
  })
  for (let turn = 1; turn <= 8; turn++) {
    expect(await rig.agent.send(`Read file ${turn}.`)).toMatchObject({ reason: 'completed' })
  }
  return rig
}

describe('the model and window the agent runs', () => {
  it('a contextWindows entry for the agent’s model (not the adapter’s default) sets the window; no request overflows', async () => {
    const { server, session } = await longSession({
      id: 'window-config',
      compaction: { contextWindows: { 'small-12k': WINDOW } },
      agent: {},
    })
    const starts = session.events.filter((e) => e.type === 'compaction/start').map((e) => e.data)
    expect(starts.length).toBeGreaterThan(0)
    for (const start of starts) {
      expect(start).toMatchObject({
        trigger: 'auto',
        model: 'small-12k',
        contextWindow: WINDOW,
        windowSource: 'config',
        reserveTokens: 1_000,
      })
      // threshold × window, but the answer's 1,000 tokens stay free
      expect(start.thresholdTokens).toBe(Math.min(Math.floor(WINDOW * 0.8), WINDOW - 1_000))
    }
    expect(server.requests.filter((r) => r.outcome === 'http-error')).toEqual([])
    expect(agentRequests(server).every((r) => r.body?.model === 'small-12k')).toBe(true)
    // the summaries are written by the same model (the prefix cache is per model)
    expect(server.requests.filter(isSummary).every((r) => r.body?.model === 'small-12k')).toBe(true)
  })

  it('the agent’s contextWindows (a preset’s) reach the plugin through ctx.model()', async () => {
    const { server, session } = await longSession({
      id: 'window-agent',
      compaction: {},
      agent: { contextWindows: { 'small-12k': WINDOW } },
    })
    const starts = session.events.filter((e) => e.type === 'compaction/start').map((e) => e.data)
    expect(starts.length).toBeGreaterThan(0)
    for (const start of starts) {
      expect(start).toMatchObject({ model: 'small-12k', contextWindow: WINDOW, windowSource: 'agent' })
    }
    expect(server.requests.filter((r) => r.outcome === 'http-error')).toEqual([])
  })

  it('a window the adapter only assumed (a model it does not know) is recorded as the default, not the adapter’s', () => {
    const config = parseCompactionConfig({})
    const known = { model: 'deepseek-v4-flash', contextWindow: 1_048_576, windowSource: 'adapter' } as const
    expect(budgetOf(config, known)).toMatchObject({ contextWindow: 1_048_576, windowSource: 'adapter' })
    const unknown = {
      model: 'my-model',
      contextWindow: 128_000,
      windowSource: 'adapter',
      assumed: true,
    } as const
    expect(budgetOf(config, unknown)).toMatchObject({ contextWindow: 128_000, windowSource: 'default' })
  })
})
