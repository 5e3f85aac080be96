import { describe, expect, it } from 'vitest'
import { MAX_HOOK_TEXT, preToolUse, userPromptSubmit } from '../src/index.js'
import { cmd, engineFor, project, script } from './scripts.js'

const bashCall = { turn: 1, callId: 'call_1', toolName: 'bash', input: { command: 'ls' } }

/** The same hook in three languages: reads all of stdin, writes `err` to stderr, exits `code`. */
function hookIn(dir: string, language: 'bash' | 'node' | 'python3', code: number): string {
  const bodies = {
    bash: `cat > /dev/null\necho "bash says $((${code}))" >&2\nexit ${code}`,
    node: `let s='';process.stdin.on('data',c=>s+=c);process.stdin.on('end',()=>{JSON.parse(s);process.stderr.write('node says ${code}\\n');process.exit(${code})})`,
    python3: `import json,sys\njson.load(sys.stdin)\nsys.stderr.write("python3 says ${code}\\n")\nsys.exit(${code})`,
  }
  const extension = { bash: 'sh', node: 'js', python3: 'py' }[language]
  return script(dir, `exit${code}.${extension}`, language, bodies[language])
}

describe('every exit code in bash, node and python3', () => {
  for (const language of ['bash', 'node', 'python3'] as const) {
    it(`${language}: 0 is no opinion, 2 denies with stderr, 1 and 3 are non-blocking errors`, async () => {
      const p = project()
      for (const [code, expected] of [
        [0, { context: [], notices: [] }],
        [2, { decision: 'deny', reason: `${language} says 2` }],
        [1, { notices: [`PreToolUse hook error (exit 1): ${language} says 1`] }],
        [3, { notices: [`PreToolUse hook error (exit 3): ${language} says 3`] }],
      ] as const) {
        const { engine } = engineFor(p, { PreToolUse: [{ hooks: [cmd(hookIn(p.dir, language, code))] }] })
        const result = await preToolUse(engine, bashCall)
        expect(result, `${language} exit ${code}`).toMatchObject(expected)
        if (code !== 2) expect(result.decision).toBeUndefined()
      }
    })
  }
})

describe('hostile output', () => {
  it('caps huge context at 10,000 characters', async () => {
    const p = project()
    const { engine } = engineFor(p, {
      UserPromptSubmit: [{ hooks: [cmd(`python3 -c "print('c' * 50000)"`)] }],
    })
    const [context] = (await userPromptSubmit(engine, { turn: 1, prompt: 'x' })).context
    expect(context!.startsWith('c'.repeat(MAX_HOOK_TEXT))).toBe(true)
    expect(context).toContain('[40000 more characters cut]')
    expect(context!.length).toBeLessThan(MAX_HOOK_TEXT + 100)
  })

  it('JSON cut at the output bound is an error, never a decision', async () => {
    const p = project()
    const huge = `python3 -c "import json; print(json.dumps({'hookSpecificOutput': {'permissionDecision': 'deny', 'permissionDecisionReason': 'r' * 3000000}}))"`
    const { engine } = engineFor(p, { PreToolUse: [{ hooks: [cmd(huge)] }] })
    const result = await preToolUse(engine, bashCall)
    expect(result.decision).toBeUndefined()
    expect(result.notices[0]).toMatch(/invalid JSON/)
  })

  it('a reason in bytes that are not UTF-8 still blocks, with replacement characters', async () => {
    const p = project()
    const { engine } = engineFor(p, {
      PreToolUse: [{ hooks: [cmd(`printf 'bad \\377\\376 bytes' >&2; exit 2`)] }],
    })
    expect(await preToolUse(engine, bashCall)).toMatchObject({
      decision: 'deny',
      reason: 'bad \uFFFD\uFFFD bytes',
    })
  })

  it('a banner before the JSON makes it plain text (no decision), as in Claude Code', async () => {
    const p = project()
    const { engine } = engineFor(p, {
      PreToolUse: [{ hooks: [cmd(`echo "Welcome!"; echo '{"decision":"block","reason":"x"}'`)] }],
    })
    expect(await preToolUse(engine, bashCall)).toEqual({ context: [], notices: [] })
  })
})
