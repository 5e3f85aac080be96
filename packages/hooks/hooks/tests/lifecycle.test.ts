import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  HookSession,
  hookLifecycleInterceptors,
  preCompact,
  sessionEnd,
  sessionStart,
  stop,
  userPromptSubmit,
} from '../src/index.js'
import { cmd, engineFor, printsJson, project, script } from './scripts.js'

const message = (text: string) => ({ role: 'user' as const, content: [{ type: 'text' as const, text }] })

describe('UserPromptSubmit', () => {
  it('always fires (matcher ignored); plain stdout and additionalContext become context', async () => {
    const p = project()
    const { engine } = engineFor(p, {
      UserPromptSubmit: [
        { matcher: 'NeverMatches', hooks: [cmd('echo "Today is a holiday."')] },
        {
          hooks: [
            cmd(
              printsJson({
                hookSpecificOutput: { hookEventName: 'UserPromptSubmit', additionalContext: 'Use pnpm.' },
              }),
            ),
          ],
        },
      ],
    })
    expect(await userPromptSubmit(engine, { turn: 1, prompt: 'hi' })).toEqual({
      context: ['Today is a holiday.', 'Use pnpm.'],
      notices: [],
    })
  })

  it('blocks on exit 2 (stderr for the user) and on decision:block', async () => {
    const p = project()
    const py = script(
      p.dir,
      'prompt.py',
      'python3',
      'import json,sys\nd=json.load(sys.stdin)\nif "password" in d["prompt"]:\n  sys.stderr.write("prompt contains a secret")\n  sys.exit(2)\nif "block" in d["prompt"]:\n  print(json.dumps({"decision":"block","reason":"not today"}))',
    )
    const { engine } = engineFor(p, { UserPromptSubmit: [{ hooks: [cmd(py)] }] })
    expect((await userPromptSubmit(engine, { turn: 1, prompt: 'my password is x' })).block).toBe(
      'prompt contains a secret',
    )
    expect((await userPromptSubmit(engine, { turn: 1, prompt: 'block me' })).block).toBe('not today')
    expect((await userPromptSubmit(engine, { turn: 1, prompt: 'fine' })).block).toBeUndefined()
  })

  it('as the promptSubmit interceptor: accept with context, or block', async () => {
    const p = project()
    const { engine } = engineFor(p, {
      UserPromptSubmit: [
        { hooks: [cmd('input=$(cat); case "$input" in *nope*) echo refused >&2; exit 2;; esac; echo ctx')] },
      ],
    })
    const displayed: string[] = []
    const lifecycle = hookLifecycleInterceptors(new HookSession(engine, {}), (t) => displayed.push(t))
    expect(await lifecycle.promptSubmit({ turn: 1, message: message('hello') })).toEqual({
      action: 'accept',
      context: 'ctx',
    })
    expect(await lifecycle.promptSubmit({ turn: 2, message: message('nope') })).toEqual({
      action: 'block',
      reason: 'refused',
    })
  })
})

describe('SessionStart', () => {
  it('matches on source and returns context', async () => {
    const p = project()
    const { engine } = engineFor(p, {
      SessionStart: [
        { matcher: 'startup', hooks: [cmd('echo "fresh start"')] },
        { matcher: 'resume|compact', hooks: [cmd('node -e "process.stdout.write(\'welcome back\')"')] },
      ],
    })
    expect((await sessionStart(engine, { source: 'startup' })).context).toEqual(['fresh start'])
    expect((await sessionStart(engine, { source: 'resume' })).context).toEqual(['welcome back'])
    const lifecycle = hookLifecycleInterceptors(new HookSession(engine, {}), () => {})
    expect(await lifecycle.sessionStart({ source: 'compact' })).toEqual({
      action: 'continue',
      context: 'welcome back',
    })
  })

  it('exit 2 blocks nothing; stderr is shown to the user', async () => {
    const p = project()
    const { engine } = engineFor(p, { SessionStart: [{ hooks: [cmd('echo "bad env" >&2; exit 3')] }] })
    const shown: string[] = []
    const lifecycle = hookLifecycleInterceptors(new HookSession(engine, {}), (t) => shown.push(t))
    expect(await lifecycle.sessionStart({ source: 'startup' })).toEqual({ action: 'continue' })
    expect(shown).toEqual(['SessionStart hook error (exit 3): bad env'])
  })
})

describe('Stop', () => {
  it('exit 2 and decision:block keep the agent going with the reasons; stop_hook_active is passed', async () => {
    const p = project()
    const py = script(
      p.dir,
      'stop.py',
      'python3',
      'import json,sys\nd=json.load(sys.stdin)\nif d["stop_hook_active"]:\n  sys.exit(0)\nprint(json.dumps({"decision":"block","reason":"run the tests first"}))',
    )
    const { engine } = engineFor(p, {
      Stop: [{ hooks: [cmd(py), cmd('echo "and update the changelog" >&2; exit 2')] }],
    })
    expect(
      await stop(engine, { turn: 1, stopHookActive: false, lastAssistantMessage: 'done' }),
    ).toMatchObject({
      continueWith: 'run the tests first\n\nand update the changelog',
    })
    expect((await stop(engine, { turn: 1, stopHookActive: true })).continueWith).toBe(
      'and update the changelog',
    )
  })

  it('continue:false beats every block; a block without a reason is ignored', async () => {
    const p = project()
    const { engine } = engineFor(p, {
      Stop: [
        { hooks: [cmd('echo more >&2; exit 2')] },
        { hooks: [cmd(printsJson({ continue: false, stopReason: 'budget spent' }))] },
      ],
    })
    expect(await stop(engine, { turn: 1, stopHookActive: false })).toMatchObject({ halt: 'budget spent' })
    expect((await stop(engine, { turn: 1, stopHookActive: false })).continueWith).toBeUndefined()
    const q = project()
    const { engine: noReason } = engineFor(q, { Stop: [{ hooks: [cmd(printsJson({ decision: 'block' }))] }] })
    expect((await stop(noReason, { turn: 1, stopHookActive: false })).continueWith).toBeUndefined()
  })

  it('a Codex Stop hook printing plain text is an error, not a decision', async () => {
    const p = project()
    const { engine } = engineFor(p, { Stop: [{ hooks: [cmd('echo keep going')] }] }, 'codex')
    const result = await stop(engine, { turn: 1, stopHookActive: false })
    expect(result.continueWith).toBeUndefined()
    expect(result.notices[0]).toMatch(/plain text/)
  })
})

describe('PreCompact and SessionEnd', () => {
  it('PreCompact matches the trigger (overflow is auto), gets custom_instructions, and can cancel', async () => {
    const p = project()
    const py = script(
      p.dir,
      'compact.py',
      'python3',
      'import json,sys,os\nd=json.load(sys.stdin)\nopen(os.path.join(os.environ["CLAUDE_PROJECT_DIR"],"compact.json"),"w").write(json.dumps(d))\nif d["custom_instructions"]=="stop":\n  sys.stderr.write("not now")\n  sys.exit(2)',
    )
    const { engine } = engineFor(p, { PreCompact: [{ matcher: 'auto', hooks: [cmd(py)] }] })
    expect(await preCompact(engine, { trigger: 'overflow' })).toEqual({ context: [], notices: [] })
    const seen = JSON.parse(readFileSync(join(p.dir, 'compact.json'), 'utf8'))
    expect(seen).toMatchObject({ hook_event_name: 'PreCompact', trigger: 'auto', custom_instructions: '' })
    expect(await preCompact(engine, { trigger: 'manual', instructions: 'stop' })).toEqual({
      context: [],
      notices: [],
    })
    expect((await preCompact(engine, { trigger: 'auto', instructions: 'stop' })).cancel).toBe('not now')
    const lifecycle = hookLifecycleInterceptors(new HookSession(engine, {}), () => {})
    expect(await lifecycle.beforeCompaction({ trigger: 'auto', instructions: 'stop' })).toEqual({
      action: 'cancel',
      reason: 'not now',
    })
    expect(await lifecycle.beforeCompaction({ trigger: 'auto', instructions: 'keep todos' })).toEqual({
      action: 'proceed',
      instructions: 'keep todos',
    })
  })

  it('SessionEnd maps the reason and is cut off at 1.5 s by default', async () => {
    const p = project()
    const { engine, session } = engineFor(p, {
      SessionEnd: [
        { matcher: 'prompt_input_exit', hooks: [cmd('cat > "$CLAUDE_PROJECT_DIR/end.json"')] },
        { matcher: 'other', hooks: [cmd('sleep 1000')] },
      ],
    })
    expect(await sessionEnd(engine, { reason: 'close' })).toEqual({ context: [], notices: [] })
    expect(JSON.parse(readFileSync(join(p.dir, 'end.json'), 'utf8'))).toMatchObject({
      reason: 'prompt_input_exit',
    })
    const slow = await sessionEnd(engine, { reason: 'error' })
    expect(slow.notices[0]).toMatch(/^SessionEnd hook timed out/)
    const results = session.events.filter((e) => e.type === 'hook/result').map((e) => e.data)
    expect(results.at(-1)).toMatchObject({ decision: 'timeout' })
    expect(results.at(-1)).not.toHaveProperty('turn')
  })
})
