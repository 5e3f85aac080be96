// The compaction plugin inside a real agent beside the other plugins it works with:
// @keel/user-approval (policy from its config, never switched), @keel/todo, and @keel/hooks
// with a real PreCompact hook script. The log goes through the real JSONL store and is
// loaded back, so every compaction event is checked where it was placed.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAgent, usePlugin } from '@keel/agent'
import { hooksPlugin } from '@keel/hooks'
import type { ScriptedResponse, ScriptHandler } from '@keel/scripted-server'
import { JsonlStore } from '@keel/store-jsonl'
import { todoPlugin, todoProjection } from '@keel/todo'
import { userApproval } from '@keel/user-approval'
import { describe, expect, it } from 'vitest'
import { compactionPlugin, DISPLAY_KINDS } from '../src/index.js'
import {
  filler,
  isSummaryRequest,
  lastText,
  onCleanup,
  readFile,
  readFourFilesTurn,
  serve,
} from './helpers.js'

/** Appends every PreCompact input to precompact.jsonl; refuses ("not now") when the instructions say "later". */
const preCompactScript =
  'input=$(cat); printf "%s\\n" "$input" >> "$CLAUDE_PROJECT_DIR/precompact.jsonl"; case "$input" in *later*) echo "not now" >&2; exit 2;; esac'

async function rig(id: string, handler: ScriptHandler, compaction: Record<string, unknown>) {
  const root = mkdtempSync(join(tmpdir(), 'keel-compaction-wired-'))
  const projectDir = join(root, 'project')
  mkdirSync(projectDir)
  const store = new JsonlStore({ home: join(root, 'store') })
  onCleanup(async () => {
    await store.close()
    rmSync(root, { recursive: true, force: true })
  })
  const { server, llm } = await serve({ handler })
  const handle = await store.create({ id })
  const displayed: Array<{ source: string; kind: string; text: string }> = []
  const agent = await createAgent({
    llm,
    session: handle,
    cwd: projectDir,
    systemPrompt: 'You are careful.',
    plugins: [
      usePlugin(userApproval({ home: join(root, 'home') }), {
        approvalPolicy: 'never',
        sandboxMode: 'read_only',
      }),
      todoPlugin,
      usePlugin(hooksPlugin, {
        sources: [],
        home: join(root, 'home'),
        keelHome: join(root, 'keel'),
        codexHome: join(root, 'codex'),
        transcriptPath: join(root, 'transcript.jsonl'),
        hooks: { PreCompact: [{ hooks: [{ type: 'command', command: preCompactScript }] }] },
      }),
      usePlugin(compactionPlugin(), compaction),
    ],
    tools: [readFile],
    observers: [{ onDisplay: (notice) => displayed.push(notice) }],
  })
  onCleanup(() => agent.close())
  const preCompactRuns = (): Array<{ trigger: string; custom_instructions: string }> => {
    try {
      return readFileSync(join(projectDir, 'precompact.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line))
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw error
    }
  }
  return { server, agent, session: handle.session, store, displayed, preCompactRuns }
}

describe('compaction with user-approval, todo and hooks in one real agent', () => {
  it('automatic inside a turn and /compact between turns: PreCompact runs, todo and the configured policy reach the summary, the log reloads', async () => {
    const steps: ScriptedResponse[] = [
      ...readFourFilesTurn(),
      { text: filler(4_000, 'second answer') },
      { text: filler(4_000, 'third answer') },
    ]
    let next = 0
    const { server, agent, session, store, displayed, preCompactRuns } = await rig(
      'wired-auto',
      (request) =>
        isSummaryRequest(request)
          ? { text: `## Goal\nRead files (summary ${request.index}).` }
          : steps[next++]!,
      { contextWindow: 6_000, maxPerTurn: 10 },
    )

    expect(await agent.send('Read a.ts, b.ts, c.ts and d.ts, then report.')).toMatchObject({
      reason: 'completed',
      text: 'All four read.',
    })

    const autoStarts = session.events.filter((e) => e.type === 'compaction/start')
    expect(autoStarts.length).toBeGreaterThan(0)
    for (const start of autoStarts) expect(start.data).toMatchObject({ trigger: 'auto', turn: 1 })
    expect(preCompactRuns()).toEqual(
      autoStarts.map(() => expect.objectContaining({ hook_event_name: 'PreCompact', trigger: 'auto' })),
    )
    // the approval plugin's configured policy, though nothing switched it, reaches the summary
    expect(session.events.some((e) => e.type === 'approval/policy' || e.type === 'sandbox/mode')).toBe(false)
    const firstSummary = lastText(server.requests.filter(isSummaryRequest)[0]!)
    expect(firstSummary).toContain('[>] Read the four files')
    expect(firstSummary).toContain('Approval policy: never\nSandbox mode: read_only')
    expect(firstSummary).toContain('Files read')
    expect(displayed).toContainEqual(
      expect.objectContaining({ source: '@keel/compaction', kind: DISPLAY_KINDS.compacted }),
    )

    // manual, between turns: the hook sees the instructions, the events carry turn null
    await agent.send('Anything else?')
    await agent.send('And?')
    expect(await agent.runCommand('compact', 'focus on X')).toMatch(/^Compacted: /)
    const manual = session.events.findLast((e) => e.type === 'compaction/start')!
    expect(manual.data).toMatchObject({ trigger: 'manual', turn: null, instructions: 'focus on X' })
    expect(session.events.findLast((e) => e.type === 'compaction/end')!.data).toMatchObject({
      turn: null,
      summarized: true,
    })
    expect(preCompactRuns().at(-1)).toMatchObject({ trigger: 'manual', custom_instructions: 'focus on X' })
    const manualSummary = lastText(server.requests.at(-1)!)
    expect(manualSummary).toContain('focus on: focus on X')
    expect(manualSummary).toContain('Approval policy: never')

    // a PreCompact hook that blocks cancels the manual run before anything is logged
    const eventsBefore = session.events.length
    expect(await agent.runCommand('compact', 'do it later')).toMatch(/^Compaction cancelled: not now/)
    expect(session.events.slice(eventsBefore).some((e) => e.type.startsWith('compaction/'))).toBe(false)
    expect(preCompactRuns()).toHaveLength(autoStarts.length + 2)

    // every event was accepted where it was placed: the stored log loads and derives the same
    await agent.close()
    const loaded = await store.load('wired-auto')
    expect(loaded.deriveMessages()).toEqual(session.deriveMessages())
    expect(loaded.project(todoProjection).map((t) => t.id)).toEqual(['read', 'report'])
  })

  it('the loop guard tells the observers when an automatic compaction cannot get below the threshold', async () => {
    // From step 2 on, the provider counts far more than the text (tool schemas, …): a gap no
    // compaction removes.
    const usage = { promptTokens: 5_500, completionTokens: 100 }
    let next = 0
    const steps: ScriptedResponse[] = [
      {
        text: filler(2_000, 'step one'),
        toolCalls: [{ name: 'read_file', arguments: { path: 'a.ts' } }],
      },
      {
        text: filler(2_000, 'step two'),
        toolCalls: [{ name: 'read_file', arguments: { path: 'b.ts' } }],
        usage,
      },
      {
        text: filler(2_000, 'step three'),
        toolCalls: [{ name: 'read_file', arguments: { path: 'c.ts' } }],
        usage,
      },
      { text: 'Done.', usage },
    ]
    const { server, agent, session, displayed } = await rig(
      'wired-guard',
      (request) => (isSummaryRequest(request) ? { text: 'Short summary.' } : steps[next++]!),
      { contextWindow: 6_000, maxPerTurn: 10 },
    )

    expect(await agent.send('Read a.ts, b.ts and c.ts.')).toMatchObject({
      reason: 'completed',
      text: 'Done.',
    })

    // one automatic summary, then none for the rest of the turn although every step was
    // over; later runs of the turn only prune (pruning is never switched off)
    expect(server.requests.filter(isSummaryRequest)).toHaveLength(1)
    const ends = session.events.filter((e) => e.type === 'compaction/end')
    const start = session.events.find((e) => e.type === 'compaction/start')!
    expect(ends[0]!.data).toMatchObject({ turn: 1, summarized: true, summaryCalls: 1 })
    expect(ends[0]!.type === 'compaction/end' && ends[0]!.data.tokensAfter).toBeGreaterThanOrEqual(
      start.type === 'compaction/start' ? start.data.thresholdTokens : Number.NaN,
    )
    for (const end of ends.slice(1)) expect(end.data).toMatchObject({ summarized: false, summaryCalls: 0 })
    const guard = displayed.filter((n) => n.kind === DISPLAY_KINDS.guard)
    expect(guard).toEqual([
      {
        source: '@keel/compaction',
        kind: 'compaction-guard',
        text: expect.stringContaining('automatic summaries are off for the rest of this turn'),
      },
    ])
  })
})
