import { readFileSync, realpathSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { postToolUse, preToolUse } from '../src/index.js'
import { cmd, engineFor, printsJson, project, script } from './scripts.js'

const call = (toolName: string, input: unknown, callId = 'call_1') => ({ turn: 1, callId, toolName, input })
const bashCall = (command: string) => call('bash', { command })

describe('PreToolUse with real hook scripts', () => {
  it('hands a python3 hook the documented stdin, env and cwd', async () => {
    const p = project()
    const dump = script(
      p.dir,
      'dump.py',
      'python3',
      [
        'import json, os, sys',
        'data = json.load(sys.stdin)',
        'data["env"] = {k: os.environ.get(k) for k in ["CLAUDE_PROJECT_DIR", "KEEL_PROJECT_DIR"]}',
        'data["pwd"] = os.getcwd()',
        'open(os.path.join(os.environ["CLAUDE_PROJECT_DIR"], "seen.json"), "w").write(json.dumps(data))',
      ].join('\n'),
    )
    const { engine, session } = engineFor(p, { PreToolUse: [{ matcher: 'Edit', hooks: [cmd(dump)] }] })
    const result = await preToolUse(
      engine,
      call('edit_file', { path: 'src/a.ts', oldString: 'x', newString: 'y' }, 'call_7'),
    )
    expect(result.decision).toBeUndefined()
    const seen = JSON.parse(readFileSync(join(p.dir, 'seen.json'), 'utf8'))
    expect(seen).toEqual({
      session_id: session.id,
      transcript_path: '/tmp/transcript.jsonl',
      cwd: p.dir,
      permission_mode: 'default',
      hook_event_name: 'PreToolUse',
      tool_name: 'Edit',
      tool_input: { file_path: join(p.dir, 'src/a.ts'), old_string: 'x', new_string: 'y' },
      tool_use_id: 'call_7',
      env: { CLAUDE_PROJECT_DIR: p.dir, KEEL_PROJECT_DIR: p.dir },
      pwd: realpathSync(p.dir),
    })
  })

  it('reads exit 0 (no opinion), exit 2 (deny, stderr to the model) and other codes (non-blocking error)', async () => {
    const p = project()
    const guard = script(
      p.dir,
      'guard.sh',
      'bash',
      [
        'input=$(cat)',
        'case "$input" in',
        '  *"rm -rf"*) echo "rm -rf is not allowed here" >&2; exit 2 ;;',
        '  *"crash"*) echo "guard broke: unexpected input" >&2; echo "second line" >&2; exit 1 ;;',
        '  *"missing"*) exec definitely-missing-interpreter-keel ;;',
        'esac',
        'exit 0',
      ].join('\n'),
    )
    const { engine } = engineFor(p, { PreToolUse: [{ matcher: 'Bash', hooks: [cmd(guard)] }] })
    expect(await preToolUse(engine, bashCall('ls'))).toEqual({ context: [], notices: [] })
    expect(await preToolUse(engine, bashCall('rm -rf /'))).toMatchObject({
      decision: 'deny',
      reason: 'rm -rf is not allowed here',
    })
    const crashed = await preToolUse(engine, bashCall('crash'))
    expect(crashed.decision).toBeUndefined()
    expect(crashed.notices).toEqual(['PreToolUse hook error (exit 1): guard broke: unexpected input'])
    const missing = await preToolUse(engine, bashCall('missing'))
    expect(missing.decision).toBeUndefined()
    expect(missing.notices[0]).toMatch(/^PreToolUse hook error \(exit 127\)/)
  })

  it('reads each JSON field a node hook prints', async () => {
    const p = project()
    const cases: Array<[unknown, Record<string, unknown>]> = [
      [
        {
          hookSpecificOutput: {
            hookEventName: 'PreToolUse',
            permissionDecision: 'allow',
            permissionDecisionReason: 'safe',
          },
        },
        { decision: 'allow', reason: 'safe' },
      ],
      [
        {
          hookSpecificOutput: {
            hookEventName: 'PreToolUse',
            permissionDecision: 'deny',
            permissionDecisionReason: 'no',
          },
        },
        { decision: 'deny', reason: 'no' },
      ],
      [
        { hookSpecificOutput: { permissionDecision: 'ask', permissionDecisionReason: 'check' } },
        { decision: 'ask', reason: 'check' },
      ],
      [
        { decision: 'approve', reason: 'legacy ok' },
        { decision: 'allow', reason: 'legacy ok' },
      ],
      [
        { decision: 'block', reason: 'legacy no' },
        { decision: 'deny', reason: 'legacy no' },
      ],
      [{ systemMessage: 'heads up', suppressOutput: true }, { notices: ['heads up'] }],
      [
        { hookSpecificOutput: { hookEventName: 'PreToolUse', additionalContext: 'repo is frozen' } },
        { context: ['repo is frozen'] },
      ],
      [{ continue: false, stopReason: 'maintenance window' }, { halt: 'maintenance window' }],
      [
        {
          hookSpecificOutput: {
            hookEventName: 'PreToolUse',
            permissionDecision: 'allow',
            updatedInput: { command: 'ls -la', timeout: 1000 },
          },
        },
        { decision: 'allow', updatedInput: { command: 'ls -la', timeoutMs: 1000 } },
      ],
      [
        { hookSpecificOutput: { hookEventName: 'PostToolUse', permissionDecision: 'deny' } },
        { notices: ['PreToolUse hook: hookSpecificOutput is for PostToolUse; ignored'] },
      ],
    ]
    for (const [printed, expected] of cases) {
      const { engine } = engineFor(p, { PreToolUse: [{ hooks: [cmd(printsJson(printed))] }] })
      const result = await preToolUse(engine, bashCall('ls'))
      expect(result, JSON.stringify(printed)).toMatchObject(expected)
      if (!('decision' in expected)) expect(result.decision).toBeUndefined()
    }
  })

  it('never reads invalid or mistyped JSON as a decision', async () => {
    const p = project()
    for (const stdout of [
      '{"hookSpecificOutput": {"permissionDecision": "deny"',
      '{"decision": 42}',
      '{"a":1}{"b":2}',
    ]) {
      const { engine } = engineFor(p, {
        PreToolUse: [{ hooks: [cmd(`printf '%s' '${stdout}'`)] }],
      })
      const result = await preToolUse(engine, bashCall('ls'))
      expect(result.decision).toBeUndefined()
      expect(result.notices).toHaveLength(1)
    }
  })

  it('runs matching hooks in parallel and the strictest decision wins (deny > ask > allow)', async () => {
    const p = project()
    // Each hook waits for the other to have started: run one after the other, they would time out.
    const rendezvous = (me: string, other: string, print: unknown) =>
      script(
        p.dir,
        `${me}.sh`,
        'bash',
        [
          `touch "$CLAUDE_PROJECT_DIR/${me}.started"`,
          'for i in $(seq 1 400); do',
          `  [ -e "$CLAUDE_PROJECT_DIR/${other}.started" ] && break`,
          '  sleep 0.05',
          'done',
          `[ -e "$CLAUDE_PROJECT_DIR/${other}.started" ] || { echo "ran alone" >&2; exit 1; }`,
          `echo '${JSON.stringify(print)}'`,
        ].join('\n'),
      )
    const decide = (decision: string, reason: string) => ({
      hookSpecificOutput: {
        hookEventName: 'PreToolUse',
        permissionDecision: decision,
        permissionDecisionReason: reason,
      },
    })
    const { engine } = engineFor(p, {
      PreToolUse: [
        { matcher: 'Bash', hooks: [cmd(rendezvous('a', 'b', decide('allow', 'fine by a')))] },
        { matcher: 'Bash|Write', hooks: [cmd(rendezvous('b', 'a', decide('deny', 'b says no')))] },
        { matcher: 'Ba.*', hooks: [cmd(printsJson(decide('ask', 'c wonders')))] },
        { matcher: 'Read', hooks: [cmd(printsJson(decide('deny', 'not matched')))] },
      ],
    })
    const result = await preToolUse(engine, bashCall('ls'))
    expect(result).toMatchObject({ decision: 'deny', reason: 'b says no', notices: [] })

    const q = project()
    const { engine: askOverAllow } = engineFor(q, {
      PreToolUse: [
        { hooks: [cmd(printsJson(decide('allow', 'x')))] },
        { hooks: [cmd(printsJson(decide('ask', 'first')))] },
        { hooks: [cmd(printsJson(decide('ask', 'second')))] },
      ],
    })
    expect(await preToolUse(askOverAllow, bashCall('ls'))).toMatchObject({
      decision: 'ask',
      reason: 'first\n\nsecond',
    })
  })

  it('a timed-out guard decides nothing (Claude Code fails open on timeouts)', async () => {
    const p = project()
    const { engine, session } = engineFor(p, {
      PreToolUse: [{ hooks: [cmd('echo "would deny" >&2; sleep 1000; exit 2', 1)] }],
    })
    const result = await preToolUse(engine, bashCall('ls'))
    expect(result.decision).toBeUndefined()
    expect(result.notices[0]).toMatch(/timed out/)
    expect(session.events.find((e) => e.type === 'hook/result')?.data).toMatchObject({ decision: 'timeout' })
  })

  it('reads Codex hooks by Codex rules: ask and bare allow are ignored; exit 2 needs a reason', async () => {
    const p = project()
    const { engine } = engineFor(
      p,
      {
        PreToolUse: [
          { hooks: [cmd(printsJson({ hookSpecificOutput: { permissionDecision: 'ask' } }))] },
          { hooks: [cmd(printsJson({ hookSpecificOutput: { permissionDecision: 'allow' } }))] },
          { hooks: [cmd('exit 2')] },
        ],
      },
      'codex',
    )
    const result = await preToolUse(engine, bashCall('ls'))
    expect(result.decision).toBeUndefined()
    expect(result.notices).toEqual(['PreToolUse hook exited 2 without a reason on stderr'])
  })

  it('logs hook/invoked and hook/result for every handler', async () => {
    const p = project()
    const { engine, session } = engineFor(p, {
      PreToolUse: [{ matcher: 'Bash', hooks: [cmd('echo "big no" >&2; exit 2'), cmd('exit 0')] }],
    })
    await preToolUse(engine, bashCall('ls'))
    const logged = session.events.filter((e) => e.type.startsWith('hook/')).map((e) => [e.type, e.data])
    expect(logged).toHaveLength(4)
    expect(logged.filter(([t]) => t === 'hook/invoked').map(([, d]) => d)).toEqual([
      {
        turn: 1,
        point: 'PreToolUse',
        dialect: 'claude',
        matcher: 'Bash',
        handler: 'claude-project:hooks.PreToolUse[0].hooks[0]',
      },
      {
        turn: 1,
        point: 'PreToolUse',
        dialect: 'claude',
        matcher: 'Bash',
        handler: 'claude-project:hooks.PreToolUse[0].hooks[1]',
      },
    ])
    const results = logged.filter(([t]) => t === 'hook/result').map(([, d]) => d as Record<string, unknown>)
    const byHandler = Object.fromEntries(results.map((r) => [r.handler, r]))
    expect(byHandler['claude-project:hooks.PreToolUse[0].hooks[0]']).toMatchObject({
      decision: 'deny',
      exitCode: 2,
      stderr: 'big no\n',
    })
    expect(byHandler['claude-project:hooks.PreToolUse[0].hooks[1]']).toMatchObject({
      decision: 'none',
      exitCode: 0,
      stderr: '',
    })
    expect(typeof byHandler['claude-project:hooks.PreToolUse[0].hooks[1]']!.durationMs).toBe('number')
  })

  it('bounds what the log keeps of stderr', async () => {
    const p = project()
    const { engine, session } = engineFor(p, {
      PreToolUse: [{ hooks: [cmd(`python3 -c "import sys; sys.stderr.write('e' * 100000); sys.exit(2)"`)] }],
    })
    const result = await preToolUse(engine, bashCall('ls'))
    expect(result.decision).toBe('deny')
    expect(result.reason!.length).toBeLessThan(10_100)
    const logged = session.events.find((e) => e.type === 'hook/result')!.data as { stderr: string }
    expect(logged.stderr.length).toBe(1000)
  })
})

describe('PostToolUse and PostToolUseFailure', () => {
  it('gives the tool response, and feeds exit 2 / decision:block reasons to the model', async () => {
    const p = project()
    const dump = script(
      p.dir,
      'post.py',
      'python3',
      'import sys,json\nd=json.load(sys.stdin)\nprint(json.dumps({"decision":"block","reason":"saw "+json.dumps(d.get("tool_response", d.get("error")))}))',
    )
    const { engine } = engineFor(p, {
      PostToolUse: [{ matcher: 'Bash', hooks: [cmd(dump), cmd('echo "lint failed" >&2; exit 2')] }],
      PostToolUseFailure: [{ hooks: [cmd(dump)] }],
    })
    const ok = await postToolUse(engine, bashCall('ls'), { text: 'a\nb', isError: false })
    expect(ok.feedback).toEqual([
      'saw {"stdout": "a\\nb", "stderr": "", "interrupted": false, "isImage": false}',
      'lint failed',
    ])
    expect(ok.replaceResult).toBeUndefined()
    const failed = await postToolUse(engine, bashCall('ls'), { text: 'Error [X]: boom', isError: true })
    expect(failed.feedback).toEqual(['saw "Error [X]: boom"'])
  })

  it('a Codex decision:block replaces the result', async () => {
    const p = project()
    const { engine } = engineFor(
      p,
      { PostToolUse: [{ hooks: [cmd(printsJson({ decision: 'block', reason: 'redacted' }))] }] },
      'codex',
    )
    expect(await postToolUse(engine, bashCall('ls'), { text: 'secret', isError: false })).toMatchObject({
      replaceResult: 'redacted',
      feedback: [],
    })
  })
})
