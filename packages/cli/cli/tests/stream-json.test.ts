import { readFileSync } from 'node:fs'
import { mkdir, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { deepSeekPrices } from '@keel/deepseek'
import { callCost } from '@keel/llm'
import type { ScriptedResponse } from '@keel/scripted-server'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { afterEach, describe, expect, it } from 'vitest'
import { outputLineValidators } from '../src/output-lines.generated.js'
import type { OutputLine, ResultLine } from '../src/output-lines.js'
import { type KeelRig, keelRig, runKeel, writeAskingPreset } from './keel-process.js'

const schema = JSON.parse(
  readFileSync(fileURLToPath(new URL('../../../../docs/stream-json.schema.json', import.meta.url)), 'utf8'),
) as Record<string, unknown>
const ajv = new Ajv2020({ allErrors: false, strict: true, keywords: ['x-uniqueBy'] })
const validateOutput = ajv.compile(schema)
const validateInput = ajv.compile({ $ref: '#/$defs/InputLine', $defs: schema.$defs })

/**
 * Parses stdout as JSON lines and checks each against both what the CLI generated from the
 * declarations: its zod validator (by `type`) and the published JSON Schema.
 */
function checkedLines(stdout: string): OutputLine[] {
  return stdout
    .split('\n')
    .filter((l) => l !== '')
    .map((text, i) => {
      const value = JSON.parse(text) as { type: keyof typeof outputLineValidators }
      const validator = outputLineValidators[value.type]
      expect(validator, `line ${i + 1} has an unknown type: ${text.slice(0, 120)}`).toBeDefined()
      const parsed = validator.safeParse(value)
      expect(parsed.success, `line ${i + 1}: ${JSON.stringify(parsed.error?.issues[0])}`).toBe(true)
      expect(validateOutput(value), `line ${i + 1}: ${ajv.errorsText(validateOutput.errors)}`).toBe(true)
      return value as unknown as OutputLine
    })
}

const rigs: KeelRig[] = []
afterEach(async () => {
  for (const r of rigs.splice(0)) await r.close()
})
async function rig(...script: ScriptedResponse[]): Promise<KeelRig> {
  const r = await keelRig(script)
  rigs.push(r)
  return r
}
const base = (r: KeelRig) => ['--base-url', r.server.baseURL, '--cwd', r.cwd]
const userLine = (text: string) =>
  `${JSON.stringify({ type: 'user', message: { role: 'user', content: text } })}\n`
const results = (lines: OutputLine[]) => lines.filter((l): l is ResultLine => l.type === 'result')

describe('keel -p --output stream-json: every line validates against its schema', {
  timeout: 120_000,
}, () => {
  it('a run with reasoning, partial text, a tool call, a refused call and a todo list', async () => {
    const r = await rig(
      {
        reasoning: 'I will plan, then look.',
        text: 'Planning.',
        chunking: { text: 3, reasoning: 4 },
        toolCalls: [
          {
            name: 'todo_write',
            arguments: { todos: [{ id: 'a', content: 'Look around', status: 'in_progress' }] },
          },
          { name: 'bash', arguments: { command: 'rm -rf build' } },
        ],
        usage: { promptTokens: 1000, completionTokens: 100, cacheHitTokens: 800 },
      },
      {
        text: 'Done: nothing to remove.',
        usage: { promptTokens: 1500, completionTokens: 20, cacheHitTokens: 1000 },
      },
    )
    await writeAskingPreset(r.home)
    const run = await runKeel(
      [
        '-p',
        'tidy up',
        '--preset',
        'asking',
        '--output',
        'stream-json',
        '--include-partial-messages',
        ...base(r),
      ],
      { env: r.env },
    )
    expect(run.code).toBe(0)
    const lines = checkedLines(run.stdout)
    expect(lines[0]).toMatchObject({ type: 'init', include_partial_messages: true, input_format: 'text' })
    expect(lines.at(-1)?.type).toBe('result')
    const types = new Set(lines.map((l) => l.type))
    expect([...types].sort()).toEqual(['display', 'event', 'init', 'result', 'stream_event'])
    // the streamed pieces add up to what the log holds
    const deltas = lines.flatMap((l) => (l.type === 'stream_event' ? [l.event] : []))
    expect(
      deltas
        .filter((d) => d.type === 'reasoning_delta')
        .map((d) => d.text)
        .join(''),
    ).toBe('I will plan, then look.')
    expect(
      deltas
        .filter((d) => d.type === 'text_delta' && d.step === 1)
        .map((d) => d.text)
        .join(''),
    ).toBe('Planning.')
    expect(deltas.filter((d) => d.type === 'text_delta').length).toBeGreaterThan(2)
    // every line its own uuid, one session
    expect(new Set(lines.map((l) => l.uuid)).size).toBe(lines.length)
    expect(new Set(lines.map((l) => l.session_id)).size).toBe(1)
    const result = results(lines)[0]!
    expect(result.permission_denials).toEqual([
      expect.objectContaining({ tool_name: 'bash', tool_input: { command: 'rm -rf build' } }),
    ])
    // priced at the published price of the model the calls named, at the tier of each call's start
    const calls = lines.flatMap((l) =>
      l.type === 'event' && l.event.type === 'assistant/message' && l.event.data.usage ? [l.event.data] : [],
    )
    expect(calls.map((c) => c.stream.model)).toEqual(['deepseek-v4-flash', 'deepseek-v4-flash'])
    const price = deepSeekPrices['deepseek-v4-flash']!
    const expected = calls.reduce((sum, c) => sum + callCost(c.usage!, price, c.stream.startedAt), 0)
    expect(expected).toBeGreaterThan(0)
    expect(result.total_cost_usd).toBeCloseTo(expected, 12)
    expect(result.usage).toEqual({ input_tokens: 2500, output_tokens: 120, cache_hit_tokens: 1800 })
  })

  it('--output json is one result line with its envelope; the preset prices an unknown model; none is null', async () => {
    const r = await rig(
      { text: 'one', usage: { promptTokens: 2_000_000, completionTokens: 1_000_000 } },
      { text: 'two', usage: { promptTokens: 10, completionTokens: 10 } },
    )
    await mkdir(join(r.home, 'presets'), { recursive: true })
    await writeFile(
      join(r.home, 'presets', 'priced.json'),
      JSON.stringify({
        id: 'priced',
        description: 'a model at our rate',
        prices: { house: { rates: { cacheMiss: 1, cacheHit: 0.5, output: 3 } } },
      }),
    )
    const priced = await runKeel(
      ['-p', 'q', '--output', 'json', '--preset', 'priced', '--model', 'house', ...base(r)],
      {
        env: r.env,
      },
    )
    expect(priced.code).toBe(0)
    const [result] = checkedLines(priced.stdout) as ResultLine[]
    expect(result).toMatchObject({ type: 'result', status: 'success', total_cost_usd: 5 })
    const unpriced = await runKeel(['-p', 'q', '--output', 'json', '--model', 'mystery', ...base(r)], {
      env: r.env,
    })
    const [none] = checkedLines(unpriced.stdout) as ResultLine[]
    expect(none).toMatchObject({ total_cost_usd: null, unpriced_models: ['mystery'] })
  })

  it('--input-format stream-json: each message a turn, one result each; lines that arrive meanwhile wait in the inbox', async () => {
    const r = await rig({ text: 'first answer' }, { text: 'second answer' }, { text: 'third answer' })
    const run = await runKeel(
      ['-p', '--input-format', 'stream-json', '--output', 'stream-json', ...base(r)],
      {
        env: r.env,
        input:
          userLine('one') +
          JSON.stringify({
            type: 'user',
            message: { role: 'user', content: [{ type: 'text', text: 'two' }] },
            session_id: 'ignored',
            parent_tool_use_id: null,
          }) +
          `\n\n${userLine('three')}`,
      },
    )
    expect(run.code).toBe(0)
    const lines = checkedLines(run.stdout)
    expect(lines[0]).toMatchObject({ type: 'init', input_format: 'stream-json' })
    expect(results(lines).map((l) => [l.result, l.status, l.num_turns])).toEqual([
      ['first answer', 'success', 1],
      ['second answer', 'success', 1],
      ['third answer', 'success', 1],
    ])
    const users = lines.flatMap((l) =>
      l.type === 'event' && l.event.type === 'user/message' ? [l.event.data.message.content] : [],
    )
    expect(users).toEqual([
      [{ type: 'text', text: 'one' }],
      [{ type: 'text', text: 'two' }],
      [{ type: 'text', text: 'three' }],
    ])
    expect(lines.some((l) => l.type === 'event' && l.event.type === 'agent/inbox/spliced')).toBe(true)
    for (const text of ['one', 'two', 'three'])
      expect(validateInput(JSON.parse(userLine(text))), ajv.errorsText(validateInput.errors)).toBe(true)
  })

  it('an interrupt line ends the running turn; the next message still runs', async () => {
    const r = await rig(
      { text: 'y'.repeat(400), chunking: { text: 1 }, delayMs: 40 },
      { text: 'after the interrupt' },
    )
    let interrupted = false
    const run = await runKeel(
      [
        '-p',
        '--input-format',
        'stream-json',
        '--output',
        'stream-json',
        '--include-partial-messages',
        ...base(r),
      ],
      {
        env: r.env,
        withStdin: (stdin) => stdin.write(userLine('slow one')),
        onStdout: (out, child) => {
          if (!interrupted && out.includes('"text_delta"')) {
            interrupted = true
            child.stdin!.write(`${JSON.stringify({ type: 'interrupt' })}\n`)
            child.stdin!.end(userLine('and then this'))
          }
        },
      },
    )
    expect(interrupted).toBe(true)
    expect(run.code).toBe(1) // a turn did not complete
    const [first, second] = results(checkedLines(run.stdout))
    expect(first).toMatchObject({ status: 'interrupted', reason: 'aborted' })
    expect(first!.signal).toBeUndefined()
    expect(second).toMatchObject({ status: 'success', result: 'after the interrupt' })
  })

  it('a line that is not an input line is named on stderr: what came before runs, nothing after is read, exit 2', async () => {
    const r = await rig({ text: 'ran' }, { text: 'never' })
    const run = await runKeel(
      ['-p', '--input-format', 'stream-json', '--output', 'stream-json', ...base(r)],
      {
        env: r.env,
        input: `${userLine('first')}{"type":"user","message":{"role":"user"}}\n${userLine('third')}`,
      },
    )
    expect(run.code).toBe(2)
    expect(run.stderr).toMatch(/^keel: INPUT_LINE_INVALID: stdin:2: message\.content: /mu)
    expect(results(checkedLines(run.stdout)).map((l) => l.result)).toEqual(['ran'])
    expect(r.server.requests.filter((q) => q.path.endsWith('/chat/completions'))).toHaveLength(1)
    const notJson = await runKeel(
      ['-p', '--input-format', 'stream-json', '--output', 'stream-json', ...base(r)],
      {
        env: r.env,
        input: 'hello\n',
      },
    )
    expect(notJson.code).toBe(2)
    expect(notJson.stderr).toMatch(/^keel: INPUT_LINE_INVALID: stdin:1: not JSON/mu)
    expect(notJson.stderr).toContain('nothing was stored')
  })

  it('the flags are checked before anything runs', async () => {
    const r = await rig()
    const refused = async (args: string[], message: string) => {
      const run = await runKeel([...args, ...base(r)], { env: r.env })
      expect(run.code).toBe(2)
      expect(run.stderr).toContain(message)
    }
    await refused(
      ['-p', 'q', '--include-partial-messages'],
      '--include-partial-messages needs -p --output stream-json',
    )
    await refused(
      ['-p', '--input-format', 'yaml', '--output', 'stream-json'],
      '--input-format must be text or stream-json',
    )
    await refused(
      ['-p', '--input-format', 'stream-json'],
      '--input-format stream-json needs -p --output stream-json',
    )
    await refused(['-p', 'task', '--input-format', 'stream-json', '--output', 'stream-json'], 'give no task')
    expect(r.server.requests).toHaveLength(0)
  })
})
