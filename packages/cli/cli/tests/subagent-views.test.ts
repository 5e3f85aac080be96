import type { ApprovalQuestion } from '@keel/agent'
import type { SessionEvent, SessionId, ToolCallId } from '@keel/session'
import type { SessionSummary } from '@keel/store'
import { describe, expect, it } from 'vitest'
import { usageOf } from '../src/json-output.js'
import { createRenderer } from '../src/render.js'
import { nestSessions } from '../src/session-tree.js'
import { renderQuestion } from '../src/terminal-answerer.js'

const summary = (id: string, createdAt: number, parent?: string): SessionSummary => ({
  id: id as SessionId,
  createdAt,
  lastActivityAt: createdAt,
  ...(parent === undefined
    ? {}
    : {
        delegatedBy: {
          session: parent as SessionId,
          turn: 1,
          callId: `call_${id}`,
          agent: 'explore',
          depth: 1,
        },
      }),
})

describe('nestSessions', () => {
  it('puts children under their parent (oldest first), keeps orphans and cycles at the top', () => {
    const rows = nestSessions([
      summary('new', 50),
      summary('p', 10),
      summary('c2', 30, 'p'),
      summary('c1', 20, 'p'),
      summary('g', 40, 'c1'),
      summary('orphan', 35, 'gone'),
      summary('x', 5, 'y'),
      summary('y', 4, 'x'),
    ])
    expect(rows.map((r) => `${'-'.repeat(r.depth)}${r.summary.id}`)).toEqual([
      'new',
      'p',
      '-c1',
      '--g',
      '-c2',
      'orphan',
      'x',
      '-y',
    ])
  })
})

describe('usageOf', () => {
  it("adds the children's settled usage to the session's own", () => {
    const events = [
      {
        type: 'assistant/message',
        seq: 1,
        time: 0,
        data: {
          turn: 1,
          step: 1,
          message: { role: 'assistant', content: [] },
          usage: { inputTokens: 10, outputTokens: 2, totalTokens: 12, cacheHitTokens: 4 },
        },
      },
      {
        type: 'subagent/settled',
        seq: 2,
        time: 0,
        data: {
          callId: 'c',
          child: 'k',
          outcome: 'completed',
          steps: 1,
          usage: { inputTokens: 100, outputTokens: 20, totalTokens: 120 },
        },
      },
    ] as unknown as SessionEvent[]
    expect(usageOf(events)).toEqual({ input_tokens: 110, output_tokens: 22, cache_hit_tokens: 4 })
  })
})

describe('renderQuestion', () => {
  it('names the subagent that asks', () => {
    const question = {
      id: '1:c>k:1:w',
      turn: 1,
      toolName: 'write_file',
      callId: 'call_1',
      reason: 'subagent explore asks: the strict policy asks before write_file writes',
      input: {},
      info: { facts: { rawPaths: ['a.txt'] } },
      rule: { toolName: 'write_file' },
      signal: new AbortController().signal,
      delegate: { agent: 'explore', session: 'k7\u001b[2J' },
    } as unknown as ApprovalQuestion
    const text = renderQuestion(question)
    expect(text.split('\n')[0]).toBe(
      'Approval needed: write_file for subagent explore (session k7?[2J) (call call_1)',
    )
    expect(text).toContain('why: subagent explore asks: the strict policy')
  })
})

describe('the one-shot renderer', () => {
  it("shows what a subagent is doing, and no other tool's progress", () => {
    let out = ''
    const renderer = createRenderer({ write: (t) => (out += t), color: false })
    const call = (name: string) =>
      ({ type: 'tool-call', id: 'c1' as ToolCallId, name, arguments: '{}' }) as const
    renderer.onToolProgress!({ turn: 1, step: 1, call: call('bash'), progress: { message: 'compiling' } })
    renderer.onToolProgress!({ turn: 1, step: 1, call: call('task'), progress: { message: 'explore: grep' } })
    expect(out).toBe('  … task: explore: grep\n')
  })
})
