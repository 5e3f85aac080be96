import { Session } from '@keel/session'
import { todoProjection } from '@keel/todo'
import { setApprovalPolicy, setSandboxMode } from '@keel/user-approval'
import { describe, expect, it } from 'vitest'
import { CompactionError, Compactor, compactionLogProjection, SUMMARY_SOURCE } from '../src/index.js'
import {
  filler,
  isSummaryRequest,
  lastText,
  messagesOf,
  newSession,
  pluginSources,
  serve,
  sessionWithPolicy,
  summariesOnSurface,
  toolPairsIntact,
  writeTurn,
} from './helpers.js'

const config = { contextWindow: 4_000, threshold: 0.8, target: 0.5, keepRecent: 0.15 }

/** Three turns of conversation with a todo list and file activity; small outputs (nothing to prune). */
function history(session: Session): void {
  writeTurn(session, 'Fix the parser bug; never touch the CI config.', [
    { calls: [{ name: 'read_file', args: { path: 'src/parser.ts' }, output: filler(600, 'parser') }] },
    {
      calls: [
        {
          name: 'read_file',
          args: { path: 'missing.ts' },
          output: 'no such file',
          errorCode: 'FS_NOT_FOUND',
        },
      ],
    },
    { text: filler(1_200, 'analysis') },
  ])
  session.append('todo/write', {
    todos: [
      { id: 'fix', content: 'Fix the parser', status: 'in_progress', activeForm: 'Fixing the parser' },
      { id: 'test', content: 'Write tests', status: 'pending' },
    ],
  })
  writeTurn(session, 'Go on.', [
    { calls: [{ name: 'edit_file', args: { path: 'src/lexer.ts', old: 'a', new: 'b' }, output: 'edited' }] },
    { text: filler(1_200, 'progress') },
  ])
  writeTurn(session, 'And now?', [{ text: filler(2_600, 'recent') }])
}

describe('tier 2: summarize', () => {
  it('a manual compaction with instructions summarizes the range with one call carrying the todo list, policy and files', async () => {
    const { server, llm } = await serve({
      script: [{ text: '## Goal\nFix the parser.\n## Next steps\nWrite tests.' }],
    })
    const session = sessionWithPolicy(
      'manual',
      { approvalPolicy: 'on_request' },
      { sandboxMode: 'workspace_write' },
    )
    history(session)
    const todosBefore = session.project(todoProjection)
    const surfaceBefore = session.surfaceSeqs()
    const compactor = new Compactor({ session, llm, config, workingState: await pluginSources(session) })

    const result = await compactor.compact({ trigger: 'manual', instructions: 'Focus on the parser.' })

    expect(result).toMatchObject({ status: 'compacted', summarized: true, pruned: 0 })
    // one request: the system prompt and the range as the model saw them, then the instruction; no tools
    expect(server.requests).toHaveLength(1)
    const request = server.requests[0]!
    expect(isSummaryRequest(request)).toBe(true)
    expect(request.body?.tools).toBeUndefined()
    const chat = messagesOf(request)
    expect(chat[0]).toEqual({ role: 'system', content: 'You are a careful engineer.' })
    expect(chat[1]).toMatchObject({ role: 'user', content: 'Fix the parser bug; never touch the CI config.' })
    const instruction = lastText(request)
    expect(instruction).toContain('Todo list (0/2 done)\n  [>] Fixing the parser\n  [ ] Write tests')
    expect(instruction).toContain('Approval policy: on_request')
    expect(instruction).toContain('Sandbox mode: workspace_write')
    expect(instruction).toContain('Files read (1):\n  - src/parser.ts')
    expect(instruction).toContain('Files modified (1):\n  - src/lexer.ts')
    expect(instruction).not.toContain('missing.ts')
    expect(instruction).toContain('The user asked this compaction to focus on: Focus on the parser.')
    // the recent tail was not sent: it stays verbatim
    expect(JSON.stringify(chat)).not.toContain('recent: the quick')

    // compaction/summary immediately followed by the user/message replacing the range
    const start = result.start!
    const events = session.events.slice(start)
    expect(events.map((e) => e.type)).toEqual([
      'compaction/start',
      'compaction/summary',
      'user/message',
      'compaction/end',
    ])
    expect(events[0]!.data).toMatchObject({
      turn: null,
      trigger: 'manual',
      instructions: 'Focus on the parser.',
    })
    const summary = events[1]!
    const replace = events[2]!
    if (summary.type !== 'compaction/summary' || replace.type !== 'user/message')
      throw new Error('unreachable')
    const tailStart = surfaceBefore.indexOf(summary.data.range.endSeq) + 1
    expect(summary.data).toMatchObject({
      start,
      summary: [{ type: 'text', text: '## Goal\nFix the parser.\n## Next steps\nWrite tests.' }],
      range: { startSeq: surfaceBefore[1], endSeq: surfaceBefore[tailStart - 1] },
      shadowedSeqs: surfaceBefore.slice(1, tailStart),
      provider: 'deepseek',
      model: 'scripted-model',
      usage: { inputTokens: expect.any(Number), outputTokens: expect.any(Number) },
    })
    expect(summary.data.summaryTokens).toBeLessThan(summary.data.tokens)
    expect(replace.surfaceOp).toEqual({ op: 'replace', ...summary.data.range })
    expect(replace.sourceEventSeqs).toEqual(summary.data.shadowedSeqs)
    expect(replace.data.source).toBe(SUMMARY_SOURCE)
    // the model now sees: system prompt, the summary (which says what was compacted), the verbatim tail
    expect(session.surfaceSeqs()).toEqual([surfaceBefore[0], replace.seq, ...surfaceBefore.slice(tailStart)])
    const [text] = summariesOnSurface(session)
    expect(text).toMatch(
      /^\[Context compacted: \d+ earlier message\(s\) \(session log seqs \d+–\d+, about [\d,]+ tokens\)/,
    )
    expect(text).toContain('<summary>\n## Goal\nFix the parser.')
    expect(text).toContain('[>] Fixing the parser')
    expect(text).toContain('Approval policy: on_request')
    expect(events[3]!.data).toMatchObject({ start, turn: null, summarized: true, pruned: 0 })
    expect(toolPairsIntact(session)).toBe(true)
    expect(session.project(todoProjection)).toEqual(todosBefore)
  })

  it("carries the policy in force from the real @keel/user-approval's approval.policy (latest switch wins)", async () => {
    const { server, llm } = await serve({ script: [{ text: 'Summary.' }] })
    const session = newSession('real-approval')
    setApprovalPolicy(session, 'never')
    setSandboxMode(session, 'danger_full_access')
    history(session)
    setApprovalPolicy(session, 'strict')
    setSandboxMode(session, 'read_only')
    const workingState = await pluginSources(session, { approvalPolicy: 'on_request' })
    expect(
      await new Compactor({ session, llm, config, workingState }).compact({ trigger: 'manual' }),
    ).toMatchObject({
      status: 'compacted',
    })
    const instruction = lastText(server.requests[0]!)
    expect(instruction).toContain('Approval policy: strict\nSandbox mode: read_only')
    expect(instruction).not.toContain('danger_full_access')
  })

  it('a failed summary call leaves the surface untouched and ends with an error; the session is not wedged', async () => {
    // a refusal that is not retried (a retryable one is retried: see retry.test.ts)
    const { server, llm } = await serve({
      script: [{ fault: { type: 'insufficient-balance' } }, { text: 'Summary.' }],
    })
    const session = newSession('failed')
    history(session)
    const surface = session.surfaceSeqs()
    const messages = session.deriveMessages().slice()
    const notices: string[] = []
    const compactor = new Compactor({
      session,
      llm,
      config,
      onNotice: (n) => notices.push(`${n.kind}: ${n.text}`),
    })

    const failed = await compactor.compact({ trigger: 'manual' })

    expect(failed).toMatchObject({
      status: 'failed',
      summarized: false,
      error: { code: 'COMPACTION_SUMMARY_FAILED' },
    })
    expect(failed.error!.message).toContain('LLM_INSUFFICIENT_BALANCE')
    expect(session.surfaceSeqs()).toEqual(surface)
    expect(session.deriveMessages()).toEqual(messages)
    const end = session.events.at(-1)!
    expect(end).toMatchObject({
      type: 'compaction/end',
      data: { start: failed.start, error: { code: 'COMPACTION_SUMMARY_FAILED' } },
    })
    expect(session.events.some((e) => e.type === 'compaction/summary')).toBe(false)
    expect(notices).toEqual([
      expect.stringMatching(/^failed: Compaction failed \(COMPACTION_SUMMARY_FAILED\)/),
    ])
    expect(session.project(compactionLogProjection).open).toBeNull()

    // the lock was released: the next compaction runs and succeeds
    expect(await compactor.compact({ trigger: 'manual' })).toMatchObject({
      status: 'compacted',
      summarized: true,
    })
    expect(server.requests).toHaveLength(2)
  })

  it('when the summary request itself is too long, summarizes the older half of the range instead', async () => {
    const { server, llm } = await serve({
      script: [{ fault: { type: 'context-length' } }, { text: 'Summary of the older half.' }],
    })
    const session = newSession('summary-overflow')
    history(session)
    writeTurn(session, 'Even more.', [{ text: filler(2_600, 'later') }])
    const surfaceBefore = session.surfaceSeqs()
    const result = await new Compactor({ session, llm, config }).compact({ trigger: 'manual' })
    expect(result).toMatchObject({ status: 'compacted', summarized: true })
    expect(server.requests).toHaveLength(2)
    const [first, second] = server.requests
    expect(messagesOf(second!).length).toBeLessThan(messagesOf(first!).length)
    const summary = session.events.find((e) => e.type === 'compaction/summary')!
    if (summary.type !== 'compaction/summary') throw new Error('unreachable')
    // the older part was replaced; the newer part of the original range is still verbatim
    const end = surfaceBefore.indexOf(summary.data.range.endSeq)
    expect(summary.data.range.startSeq).toBe(surfaceBefore[1])
    expect(session.surfaceSeqs().slice(2)).toEqual(surfaceBefore.slice(end + 1))
    expect(messagesOf(second!).length - 2).toBe(summary.data.shadowedSeqs.length)
    expect(toolPairsIntact(session)).toBe(true)
  })

  it('refuses a summary that is not smaller than what it replaces, and an empty one', async () => {
    const { llm } = await serve({
      script: [{ text: filler(12_000, 'verbose'), chunking: { text: 2_000 } }, { text: '' }],
    })
    const session = newSession('not-smaller')
    history(session)
    const messages = session.deriveMessages().slice()
    const compactor = new Compactor({ session, llm, config })
    expect(await compactor.compact({ trigger: 'manual' })).toMatchObject({
      status: 'failed',
      error: { code: 'COMPACTION_SUMMARY_NOT_SMALLER' },
    })
    expect(await compactor.compact({ trigger: 'manual' })).toMatchObject({
      status: 'failed',
      error: { code: 'COMPACTION_SUMMARY_EMPTY' },
    })
    expect(session.deriveMessages()).toEqual(messages)
  })
})

describe('the lock', () => {
  it('runs one compaction at a time per engine', async () => {
    const { llm } = await serve({ script: [{ text: 'Summary.', headersDelayMs: 300 }, { text: 'Again.' }] })
    const session = newSession('lock')
    history(session)
    const b = new Compactor({ session, llm, config })
    const first = b.compact({ trigger: 'manual' })
    expect(b.busy).toBe(true)
    await expect(b.compact({ trigger: 'manual' })).rejects.toMatchObject({ code: 'COMPACTION_BUSY' })
    expect(await b.compactIfNeeded()).toMatchObject({ status: 'skipped' })
    expect(await first).toMatchObject({ status: 'compacted' })
    expect(b.busy).toBe(false)
    writeTurn(session, 'More.', [{ text: filler(3_000, 'more') }])
    expect(await b.compact({ trigger: 'manual' })).toMatchObject({ status: 'compacted' })
    expect(session.events.filter((e) => e.type === 'compaction/start')).toHaveLength(2)
  })

  it('an unclosed start left by a crashed process does not block', async () => {
    const { llm } = await serve({ script: [{ text: 'Summary after the crash.' }] })
    const crashed = newSession('crashed')
    history(crashed)
    crashed.append('compaction/start', {
      turn: null,
      trigger: 'manual',
      tokensBefore: 3_000,
      tokenSource: 'estimate',
      estimateBefore: 3_000,
      contextWindow: 4_000,
      thresholdTokens: 3_200,
    })
    // the process died here; the next one loads the log
    const session = Session.create(
      'crashed',
      {},
      crashed.events.map((e) => JSON.parse(JSON.stringify(e))),
    )
    expect(session.project(compactionLogProjection).open).toMatchObject({ seq: crashed.events.length - 1 })
    const result = await new Compactor({ session, llm, config }).compact({ trigger: 'manual' })
    expect(result).toMatchObject({ status: 'compacted', summarized: true })
    expect(session.project(compactionLogProjection).open).toBeNull()
  })

  it('PreCompact hooks can cancel a compaction or change its instructions', async () => {
    const { server, llm } = await serve({ script: [{ text: 'Summary.' }] })
    const session = newSession('hooks')
    history(session)
    const seen: unknown[] = []
    let cancel = true
    const compactor = new Compactor({
      session,
      llm,
      config,
      beforeCompaction(info) {
        seen.push(info)
        return cancel
          ? { action: 'cancel', reason: 'the hook said no' }
          : { action: 'proceed', instructions: 'Keep the error messages verbatim.' }
      },
    })
    const events = session.events.length
    expect(await compactor.compact({ trigger: 'manual', instructions: 'x' })).toMatchObject({
      status: 'cancelled',
      reason: 'the hook said no',
    })
    expect(session.events.length).toBe(events)
    cancel = false
    expect(await compactor.compact({ trigger: 'manual' })).toMatchObject({ status: 'compacted' })
    expect(seen).toEqual([{ trigger: 'manual', instructions: 'x' }, { trigger: 'manual' }])
    expect(lastText(server.requests[0]!)).toContain('focus on: Keep the error messages verbatim.')
    // a hook that throws cancels (fails closed) instead of failing the caller
    const broken = new Compactor({
      session,
      llm,
      config,
      beforeCompaction() {
        throw new Error('hook crashed')
      },
    })
    expect(await broken.compact({ trigger: 'manual' })).toMatchObject({
      status: 'cancelled',
      reason: 'the PreCompact hook failed: hook crashed',
    })
    expect(server.requests).toHaveLength(1)
  })

  it('rejects a bad config with a typed error naming the field', async () => {
    const { llm } = await serve()
    const session = newSession('config')
    const thrown = (config: unknown): unknown => {
      try {
        new Compactor({ session, llm, config: config as never })
      } catch (error) {
        return error
      }
      throw new Error('no error thrown')
    }
    expect(thrown({ threshold: 0.4, target: 0.6 })).toBeInstanceOf(CompactionError)
    expect(thrown({ threshold: 2 })).toMatchObject({
      code: 'COMPACTION_CONFIG_INVALID',
      details: { path: 'config.threshold' },
    })
    expect(thrown({ keepRecent: 0.6 })).toMatchObject({ details: { path: 'config.keepRecent' } })
  })
})
