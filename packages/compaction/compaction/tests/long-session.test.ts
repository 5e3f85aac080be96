// A long scripted agent session stays inside its window with its todo list intact. This
// test runs 100 turns; `pnpm bench compaction` runs the same shape for 1,000 turns.
import { createAgent, usePlugin } from '@keel/agent'
import type { ScriptedResponse } from '@keel/scripted-server'
import { Session } from '@keel/session'
import { todoPlugin, todoProjection } from '@keel/todo'
import { defineTool } from '@keel/tools'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { compactionPlugin, measureSurface } from '../src/index.js'
import { filler, isSummaryRequest, messagesOf, onCleanup, serve } from './helpers.js'

const TURNS = 100
const WINDOW = 6_000

const readFile = defineTool({
  name: 'read_file',
  description: 'Reads a file.',
  inputSchema: z.strictObject({ path: z.string() }),
  annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
  async call({ path }) {
    return filler(3_000, path)
  },
})

describe('a long session', () => {
  it(`${TURNS} turns stay under a ${WINDOW}-token window, with the todo list intact`, async () => {
    let turn = 0
    let step = 0
    const { server, llm } = await serve({
      handler(request): ScriptedResponse {
        if (isSummaryRequest(request))
          return { text: `## Goal\nWork through the tasks.\n## Progress\nAt task ${turn}.` }
        step++
        if (step === 1 && turn % 25 === 1) {
          return {
            toolCalls: [
              {
                name: 'todo_write',
                arguments: {
                  todos: [
                    {
                      id: `batch-${turn}`,
                      content: `Finish the batch from task ${turn}`,
                      status: 'in_progress',
                    },
                    { id: 'report', content: 'Write the report', status: 'pending' },
                  ],
                },
              },
            ],
          }
        }
        if (step <= 2) {
          return {
            text: filler(400, `plan ${turn}`),
            toolCalls: [{ name: 'read_file', arguments: { path: `f${turn}.ts` } }],
          }
        }
        return { text: `Task ${turn} done.` }
      },
    })
    const session = Session.create('long')
    const agent = await createAgent({
      llm,
      session,
      cwd: process.cwd(),
      systemPrompt: 'Work through the tasks.',
      plugins: [
        usePlugin(compactionPlugin({ llm }), { contextWindow: WINDOW }),
        usePlugin(todoPlugin, { reminderAfterSteps: 0 }),
      ],
      tools: [readFile],
    })
    onCleanup(() => agent.close())
    for (turn = 1; turn <= TURNS; turn++) {
      step = 0
      expect((await agent.send(`Task ${turn}.`)).reason).toBe('completed')
      expect(measureSurface(session).tokens).toBeLessThan(WINDOW)
    }
    for (const request of server.requests) {
      expect(Math.ceil(JSON.stringify(messagesOf(request)).length / 4)).toBeLessThan(WINDOW)
    }
    expect(session.project(todoProjection).map((t) => t.id)).toEqual([
      `batch-${Math.floor((TURNS - 1) / 25) * 25 + 1}`,
      'report',
    ])
    const ends = session.events.filter((e) => e.type === 'compaction/end')
    expect(ends.length).toBeGreaterThan(10)
    expect(ends.every((e) => e.type === 'compaction/end' && e.data.error === undefined)).toBe(true)
    expect(server.requests.filter(isSummaryRequest).length).toBeGreaterThan(0)
    // the latest summary request carried the todo list as it stood
    const lastSummary = server.requests.filter(isSummaryRequest).at(-1)!
    expect(JSON.stringify(messagesOf(lastSummary).at(-1))).toContain('Write the report')
  }, 120_000)
})
