// PreCompact hooks through the real @keel/hooks engine (real child processes): the shape of
// its `beforeCompaction` is the Compactor's, so the integrator passes it straight through.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { HookEngine, HookSession, hookLifecycleInterceptors, loadHooks } from '@keel/hooks'
import { describe, expect, it } from 'vitest'
import { Compactor } from '../src/index.js'
import { filler, lastText, newSession, onCleanup, serve, writeTurn } from './helpers.js'

const config = { contextWindow: 4_000, threshold: 0.8, target: 0.5, keepRecent: 0.15 }

describe('PreCompact hooks (@keel/hooks)', () => {
  it('a hook sees the trigger and instructions and can cancel the compaction', async () => {
    const root = mkdtempSync(join(tmpdir(), 'keel-compaction-hooks-'))
    onCleanup(async () => rmSync(root, { recursive: true, force: true }))
    const projectDir = join(root, 'project')
    mkdirSync(projectDir)
    const { server, llm } = await serve({ script: [{ text: 'Summary.' }] })
    const session = newSession('hooks')
    writeTurn(session, 'Work.', [{ text: filler(3_000, 'a') }, { text: filler(3_000, 'b') }])
    writeTurn(session, 'More.', [{ text: filler(2_600, 'c') }])
    const hooks = loadHooks({
      sources: [],
      locations: {
        projectDir,
        home: join(root, 'home'),
        keelHome: join(root, 'keel'),
        codexHome: join(root, 'codex'),
      },
      inline: {
        PreCompact: [
          {
            matcher: 'manual',
            hooks: [
              {
                type: 'command',
                command:
                  'input=$(cat); printf "%s" "$input" > "$CLAUDE_PROJECT_DIR/seen.json"; case "$input" in *later*) echo "not now" >&2; exit 2;; esac',
              },
            ],
          },
        ],
      },
    })
    const engine = new HookEngine(hooks, {
      projectDir,
      session,
      transcriptPath: join(root, 'transcript.jsonl'),
    })
    const displayed: string[] = []
    const lifecycle = hookLifecycleInterceptors(new HookSession(engine, {}), (t) => displayed.push(t))
    const compactor = new Compactor({
      session,
      llm,
      config,
      beforeCompaction: (info) => lifecycle.beforeCompaction(info),
    })

    const cancelled = await compactor.compact({ trigger: 'manual', instructions: 'do it later' })
    expect(cancelled).toMatchObject({ status: 'cancelled', reason: 'not now' })
    expect(session.events.some((e) => e.type === 'compaction/start')).toBe(false)
    expect(server.requests).toHaveLength(0)

    const done = await compactor.compact({ trigger: 'manual', instructions: 'Keep file names.' })
    expect(done).toMatchObject({ status: 'compacted', summarized: true })
    const seen = JSON.parse(readFileSync(join(projectDir, 'seen.json'), 'utf8'))
    expect(seen).toMatchObject({
      hook_event_name: 'PreCompact',
      trigger: 'manual',
      custom_instructions: 'Keep file names.',
    })
    expect(lastText(server.requests[0]!)).toContain('focus on: Keep file names.')
    // the hook runs were logged by the hooks engine in the same session
    expect(session.events.filter((e) => (e.type as string) === 'hook/result')).toHaveLength(2)
  })
})
