import { mkdir, mkdtemp, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { deepSeekPrices } from '@keel/deepseek'
import { callCost, isPeak, type ModelPrice, type ToolCallId, type ToolResultMessage } from '@keel/llm'
import type { SessionEvent, SessionSeq } from '@keel/session'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { resultHtml } from '../src/export-calls.js'
import { refusalText } from '../src/refusal.js'
import { toolOutcome } from '../src/result-view.js'
import { dollars, sessionUsage } from '../src/session-usage.js'
import { isPaste } from '../src/tui/keys.js'
import { closeOpenFence, safeSplit } from '../src/tui/markdown.js'
import { attachMentions, commonPrefix, completePath, mentionAt, typedPart } from '../src/tui/mentions.js'
import { helpText } from '../src/tui/slash.js'
import { userLine } from '../src/tui/transcript.js'
import { hangingText, wrapEachLine } from '../src/tui/wrap.js'

describe('streaming markdown is cut only where the part before it is finished', () => {
  it('cuts after the last blank line outside a code fence', () => {
    expect(safeSplit('one\n\ntwo')).toBe(5)
    expect(safeSplit('one\n\n```js\na\n\nb')).toBe(5) // the blank line inside the fence is no cut
    expect(safeSplit('one\n\n```js\na\n\nb\n```\n\nrest')).toBe('one\n\n```js\na\n\nb\n```\n\n'.length)
    expect(safeSplit('no blank line yet')).toBe(0)
    expect(closeOpenFence('x\n```ts\nconst a')).toBe('x\n```ts\nconst a\n```')
    expect(closeOpenFence('```\na\n```')).toBe('```\na\n```')
  })

  it('every cut leaves a finished prefix: no fence opens in it without closing', () => {
    const piece = fc.constantFrom('text', '', '```', '~~~', '```js', '- item', '| a | b |')
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (lines) => {
        const text = lines.join('\n')
        const cut = safeSplit(text)
        expect(closeOpenFence(text.slice(0, cut))).toBe(text.slice(0, cut))
      }),
      { seed: 26 },
    )
  })
})

describe('cost at the published prices', () => {
  const flash = deepSeekPrices['deepseek-v4-flash']!
  const usage = {
    inputTokens: 1_000_000,
    outputTokens: 1_000_000,
    totalTokens: 2_000_000,
    cacheHitTokens: 400_000,
  }
  it('bills each call at the tier in force when it started (weekday peak windows in UTC)', () => {
    const tuesdayPeak = Date.UTC(2026, 11, 1, 2, 30) // 10:30 Beijing
    const tuesdayOff = Date.UTC(2026, 11, 1, 12, 0)
    const saturday = Date.UTC(2026, 11, 5, 2, 30)
    expect(isPeak(flash, tuesdayPeak)).toBe(true)
    expect(isPeak(flash, tuesdayOff)).toBe(false)
    expect(isPeak(flash, saturday)).toBe(false)
    // 0.4M cached at 0.006, 0.6M missed at 0.3, 1M out at 1.2
    expect(callCost(usage, flash, tuesdayPeak)).toBeCloseTo(0.0024 + 0.18 + 1.2, 10)
    expect(callCost(usage, flash, tuesdayOff)).toBeCloseTo((0.0024 + 0.18 + 1.2) / 2, 10)
    const flat: ModelPrice = { rates: { cacheHit: 1, cacheMiss: 2, output: 3 } }
    expect(callCost({ inputTokens: 10, outputTokens: 0, totalTokens: 10 }, flat, 0)).toBeCloseTo(
      20 / 1_000_000,
    )
  })

  it('folds a session: totals per model, the last call’s context, unpriced models named', () => {
    const call = (model: string, input: number, output: number): SessionEvent =>
      ({
        type: 'assistant/message',
        seq: 0,
        time: 0,
        data: {
          turn: 1,
          step: 1,
          message: { role: 'assistant', content: [] },
          stream: { provider: 'deepseek', model, startedAt: Date.UTC(2026, 11, 5), endedAt: 0, chunks: 1 },
          usage: { inputTokens: input, outputTokens: output, totalTokens: input + output },
        },
      }) as unknown as SessionEvent
    const usage = sessionUsage(
      [call('deepseek-v4-pro', 1000, 10), call('local-llama', 500, 5)],
      deepSeekPrices,
    )
    expect(usage.total).toMatchObject({ calls: 2, inputTokens: 1500, outputTokens: 15 })
    expect(usage.byModel.get('deepseek-v4-pro')!.costUsd).toBeCloseTo((1000 * 0.66 + 10 * 1.98) / 1e6)
    expect(usage.unpriced).toEqual(['local-llama'])
    expect(usage.lastContextTokens).toBe(505)
    expect(dollars(0.00123)).toBe('$0.0012')
    expect(dollars(2.5)).toBe('$2.50')
  })
})

describe('@path mentions', () => {
  it('finds the mention under the cursor, completes it, and attaches files and listings', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'keel-mentions-'))
    await mkdir(join(dir, 'src'))
    await writeFile(join(dir, 'src', 'main.ts'), 'export const x = 1\n')
    await writeFile(join(dir, 'src', 'main.test.ts'), 'test\n')
    await writeFile(join(dir, 'blob.bin'), Buffer.from([1, 0, 2]))
    expect(mentionAt('look at @src/ma', 15)).toEqual({ start: 9, partial: 'src/ma' })
    expect(mentionAt('mail me@example.com', 19)).toBeUndefined()
    expect(await completePath(dir, 'src/ma')).toEqual(['src/main.test.ts', 'src/main.ts'])
    expect(await completePath(dir, 's')).toEqual(['src/'])
    expect(commonPrefix(['src/main.test.ts', 'src/main.ts'])).toBe('src/main.t')
    const sent = await attachMentions('see @src/main.ts, @src and @blob.bin; mail a@b.c @nothing', dir)
    expect(sent.attached).toEqual(['src/main.ts', 'src'])
    expect(sent.notes).toEqual(['@blob.bin looks binary; not attached'])
    expect(sent.message.content[1]).toEqual({
      type: 'text',
      text: '<attached path="src/main.ts">\nexport const x = 1\n\n</attached>',
    })
    expect(sent.message.content[2]!.type === 'text' && sent.message.content[2]!.text).toContain(
      'main.test.ts\nmain.ts',
    )
    expect(typedPart(sent.message)).toEqual({
      text: 'see @src/main.ts, @src and @blob.bin; mail a@b.c @nothing',
      attached: ['src/main.ts', 'src'],
    })
  })
})

describe('refusals and pastes', () => {
  const call = {
    type: 'tool-call' as const,
    id: 'call_1' as never,
    name: 'bash',
    arguments: '{"command":"rm out.txt"}',
  }
  it('says who refused what, in a person’s words', () => {
    const rejected =
      "Error [USER_REJECTED]: bash was not run: denied by plugin '@keel/user-approval': no OS sandbox; rejected: keep it"
    expect(refusalText(call, 'USER_REJECTED', rejected, 'keep it')).toBe(
      '✗ you refused `rm out.txt`: “keep it”',
    )
    expect(refusalText(call, 'APPROVAL_UNAVAILABLE', '', undefined)).toBe(
      '✗ `rm out.txt` needed your approval and nobody could answer: not run',
    )
    const denied =
      "Error [PROTECTED_PATH]: bash was not run: denied by plugin '@keel/user-approval': .git is protected"
    expect(refusalText(call, 'PROTECTED_PATH', denied, undefined)).toBe(
      '✗ `rm out.txt` refused (PROTECTED_PATH): .git is protected',
    )
  })

  it('a chunk is a paste only with a line break between other characters', () => {
    expect(isPaste('first line\nsecond')).toBe(true)
    expect(isPaste('typed fast\r')).toBe(false)
    expect(isPaste('\rthird')).toBe(false)
    expect(isPaste('\x1b[A\n')).toBe(false)
  })
})

describe('/help laid out for the terminal', () => {
  const rows: Array<readonly [string, string]> = [
    ['/help', 'this list'],
    [
      '/sandbox [read_only|workspace_write|danger_full_access]',
      'show or set the sandbox mode (recorded in the log) (@keel/user-approval)',
    ],
    ['/todo', 'the todo list as the log has it (@keel/todo)'],
  ]

  it('wraps a description at a word and indents it to its column; a wide command has it underneath', () => {
    expect(helpText(rows, 60).split('\n').slice(0, 6)).toEqual([
      '/help  this list',
      '/sandbox [read_only|workspace_write|danger_full_access]',
      '       show or set the sandbox mode (recorded in the log)',
      '       (@keel/user-approval)',
      '/todo  the todo list as the log has it (@keel/todo)',
      'keys: Enter sends · Ctrl-J or \\+Enter adds a line',
    ])
  })

  it('no line is wider than the terminal, and every word is there in order', () => {
    const word = fc.stringMatching(/^[a-z@/()[\]|<>.-]{1,14}$/u)
    const text = fc.array(word, { minLength: 1, maxLength: 20 }).map((w) => w.join(' '))
    fc.assert(
      fc.property(
        fc.array(fc.tuple(text, text), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 40, max: 160 }),
        (given, columns) => {
          const out = helpText(given, columns)
          for (const line of out.split('\n')) expect(line.length).toBeLessThanOrEqual(columns)
          const all = given.flatMap(([cmd, desc]) => [...cmd.split(' '), ...desc.split(' ')])
          expect(
            out
              .split(/\s+/u)
              .filter((w) => w !== '')
              .slice(0, all.length),
          ).toEqual(all)
        },
      ),
      { seed: 41 },
    )
  })
})

describe('a tool result as summaries mark it', () => {
  const result = (toolName: string, text: string): ToolResultMessage => ({
    role: 'tool',
    toolCallId: 'c1' as ToolCallId,
    toolName,
    content: [{ type: 'text', text }],
  })

  it.each([
    ['bash', 'cat: x: No such file\n[exit code 1]', undefined, true, '✗ exit 1', ['cat: x: No such file']],
    ['bash', 'fine\n[exit code 0]', undefined, false, '✓', ['fine']],
    ['bash', '[exit code 0]', undefined, false, '✓', []],
    ['bash', 'partial\n[killed by signal SIGKILL]', undefined, true, '✗ killed by SIGKILL', ['partial']],
    ['bash', 'Error [TIMEOUT]: slow\n[timed out]', 'TIMEOUT', true, '✗ TIMEOUT', ['slow', '[timed out]']],
    // only the shell tool's own status line is read as one
    ['read_file', 'notes\n[exit code 1]', undefined, false, '✓', ['notes', '[exit code 1]']],
    ['bash', 'it said [exit code 1] mid-line', undefined, false, '✓', ['it said [exit code 1] mid-line']],
  ] as const)('%s %j (%s)', (tool, text, code, failed, mark, lines) => {
    expect(toolOutcome(result(tool, text), code)).toEqual({ failed, mark, lines })
  })

  it('the exported page marks a command that exited non-zero as failed', () => {
    const event: SessionEvent<'tool/result'> = {
      type: 'tool/result',
      seq: 3 as SessionSeq,
      time: 0,
      data: { turn: 1, step: 1, message: result('bash', 'cat: x: No such file\n[exit code 1]') },
    }
    expect(resultHtml(event)).toMatch(/^<div class="result error"><span class="status">✗ exit 1<\/span>/u)
  })
})

describe('transcript lines wrapped under their text', () => {
  it('continues a long line indented, between words, within the width', () => {
    expect(
      hangingText('← ', 'read_file ✓ The user approved the plan. Plan mode is off: carry it out', 2, 40),
    ).toBe('← read_file ✓ The user approved the\n  plan. Plan mode is off: carry it out')
    expect(hangingText('· ', "The model's plan:\n\n1. Create c.txt", 2, 40)).toBe(
      "· The model's plan:\n  \n  1. Create c.txt",
    )
  })

  it('keeps every word in order, and no line is wider than the terminal (words that fit)', () => {
    const word = fc.stringMatching(/^[a-z✓←.:-]{1,12}$/u)
    fc.assert(
      fc.property(
        fc.array(word, { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 20, max: 120 }),
        (words, columns) => {
          const out = hangingText('← ', words.join(' '), 2, columns)
          const lines = out.split('\n')
          for (const line of lines) expect(line.length).toBeLessThanOrEqual(columns)
          for (const line of lines.slice(1)) expect(line.startsWith('  ')).toBe(true)
          expect(
            out
              .slice(2)
              .split(/\s+/u)
              .filter((w) => w !== ''),
          ).toEqual(words)
        },
      ),
      { seed: 7 },
    )
  })
})

describe('a report wrapped line by line', () => {
  it('leaves lines that fit; a long one goes on indented past its own indentation', () => {
    const report = [
      'preset coding: @keel/user-approval@0.1.0, @keel/permission-presets@0.1.0, @keel/plan-mode@0.1.0',
      '  window 1,048,576 tokens',
      '    a nested line that is long enough to wrap around',
    ].join('\n')
    expect(wrapEachLine(report, 2, 50)).toBe(
      [
        'preset coding: @keel/user-approval@0.1.0,',
        '  @keel/permission-presets@0.1.0,',
        '  @keel/plan-mode@0.1.0',
        '  window 1,048,576 tokens',
        '    a nested line that is long enough to wrap',
        '      around',
      ].join('\n'),
    )
  })
})

describe('a user message in the transcript', () => {
  const event = (text: string, source?: string): SessionEvent<'user/message'> => ({
    type: 'user/message',
    seq: 2 as SessionSeq,
    time: 0,
    data: { message: { role: 'user', content: [{ type: 'text', text }] }, ...(source ? { source } : {}) },
  })

  it('names a plugin’s source and cuts its long message; what a person typed is shown whole', () => {
    const long = ['Draft AGENTS.md', 'one', 'two', 'three', 'four'].join('\n')
    expect(userLine(event(long, 'project-instructions/init'))).toBe(
      '(project-instructions/init) Draft AGENTS.md\none\ntwo\n… (+2 more lines: keel sessions show has all)',
    )
    expect(userLine(event(long))).toBe(long)
    expect(userLine(event('Check the build now.', 'schedule/s1'))).toBe('(schedule/s1) Check the build now.')
  })
})
