import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import {
  createToolContext,
  defineTool,
  isConcurrencySafe,
  runToolCall,
  type Tool,
  type ToolContext,
  ToolError,
  type ToolOutput,
  toolFacts,
  truncateText,
} from '../src/index.js'

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'keel-tools-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const annotations = { readOnly: true, destructive: false, openWorld: false, idempotent: true }

/** A tool that counts its runs and does whatever `impl` says. */
function probe(
  impl: (input: { n: number; text?: string }, ctx: ToolContext) => Promise<ToolOutput | string>,
) {
  const runs: Array<{ n: number; text?: string }> = []
  const tool = defineTool<{ n: number; text?: string }>({
    name: 'probe',
    description: 'test tool',
    inputSchema: z.strictObject({ n: z.number().int().min(0), text: z.string().optional() }),
    annotations,
    async call(input, ctx) {
      runs.push(input)
      return impl(input, ctx)
    },
  })
  return { tool, runs }
}

const text = (output: ToolOutput) =>
  output.content.map((b) => (b.type === 'text' ? b.text : `<${b.type}>`)).join('\n')

describe('runToolCall', () => {
  it('runs the tool with the validated input and normalizes a string result', async () => {
    const { tool, runs } = probe(async (input) => `got ${input.n}`)
    const outcome = await runToolCall(tool, '{"n": 3}', createToolContext({ cwd: dir }))
    expect(outcome).toEqual({ output: { content: [{ type: 'text', text: 'got 3' }] }, ran: true })
    expect(runs).toEqual([{ n: 3 }])
  })

  it('treats empty arguments as {}', async () => {
    const tool = defineTool<Record<string, never>>({
      name: 'noargs',
      description: 'x',
      inputSchema: z.strictObject({}),
      annotations,
      call: async () => 'fine',
    })
    expect(text((await runToolCall(tool, '  ', createToolContext({ cwd: dir }))).output)).toBe('fine')
  })

  it('bad JSON: TOOL_INPUT_INVALID_JSON and the tool is not run', async () => {
    const { tool, runs } = probe(async () => 'ran')
    const outcome = await runToolCall(tool, '{"n": 3', createToolContext({ cwd: dir }))
    expect(outcome.ran).toBe(false)
    expect(outcome.output.isError).toBe(true)
    expect(outcome.output.errorCode).toBe('TOOL_INPUT_INVALID_JSON')
    expect(text(outcome.output)).toContain('{"n": 3')
    expect(runs).toEqual([])
  })

  it('schema failure: TOOL_INPUT_INVALID naming each bad field, tool not run', async () => {
    const { tool, runs } = probe(async () => 'ran')
    const outcome = await runToolCall(tool, '{"n": "three", "extra": 1}', createToolContext({ cwd: dir }))
    expect(outcome.output.errorCode).toBe('TOOL_INPUT_INVALID')
    expect(outcome.ran).toBe(false)
    const message = text(outcome.output)
    expect(message).toMatch(/- n: .*number/)
    expect(message).toContain('extra')
    expect(message).toContain('call probe again')
    expect(runs).toEqual([])
  })

  it('schema failure with a 1 MB key, or thousands of issues: a short TOOL_INPUT_INVALID', async () => {
    const { tool } = probe(async () => 'ran')
    const huge = JSON.stringify({ n: 1, ['k'.repeat(1 << 20)]: 1 })
    const one = text((await runToolCall(tool, huge, createToolContext({ cwd: dir }))).output)
    expect(one).toContain('Unrecognized key')
    expect(one).toContain('characters elided')
    expect(one.length).toBeLessThan(1_000)
    const many = defineTool<{ xs: number[] }>({
      name: 'many',
      description: 'x',
      inputSchema: z.strictObject({ xs: z.array(z.number()) }),
      annotations,
      call: async () => 'ran',
    })
    const bad = JSON.stringify({ xs: Array.from({ length: 10_000 }, () => 'not a number') })
    const listed = text((await runToolCall(many, bad, createToolContext({ cwd: dir }))).output)
    expect(listed).toContain('- xs[0]: ')
    expect(listed).toContain('and 9,990 more issues'.replace(',', ''))
    expect(listed.length).toBeLessThan(2_000)
    const json = text(
      (await runToolCall(tool, `{"n": 1, "${'k'.repeat(1 << 20)}`, createToolContext({ cwd: dir }))).output,
    )
    expect(json.length).toBeLessThan(1_000)
  })

  it('a thrown ToolError keeps its code and message', async () => {
    const { tool } = probe(async () => {
      throw new ToolError('FILE_NOT_FOUND', 'no file at x.txt; check the path')
    })
    const { output } = await runToolCall(tool, '{"n":1}', createToolContext({ cwd: dir }))
    expect(output).toEqual({
      content: [{ type: 'text', text: 'Error [FILE_NOT_FOUND]: no file at x.txt; check the path' }],
      isError: true,
      errorCode: 'FILE_NOT_FOUND',
    })
  })

  it('any other thrown error becomes TOOL_FAILED with its message', async () => {
    const { tool } = probe(async () => {
      throw new TypeError('boom at line 3')
    })
    const { output, ran } = await runToolCall(tool, '{"n":1}', createToolContext({ cwd: dir }))
    expect(ran).toBe(true)
    expect(output.errorCode).toBe('TOOL_FAILED')
    expect(text(output)).toContain('boom at line 3')
  })

  it('a malformed return value is TOOL_FAILED', async () => {
    const { tool } = probe(async () => ({ nope: true }) as unknown as string)
    expect((await runToolCall(tool, '{"n":1}', createToolContext({ cwd: dir }))).output.errorCode).toBe(
      'TOOL_FAILED',
    )
  })

  it('an error output without a code gets TOOL_FAILED; one with a code keeps it', async () => {
    const a = probe(async () => ({ content: [{ type: 'text', text: 'x' }], isError: true }))
    expect((await runToolCall(a.tool, '{"n":1}', createToolContext({ cwd: dir }))).output.errorCode).toBe(
      'TOOL_FAILED',
    )
    const b = probe(async () => ({
      content: [{ type: 'text', text: 'x' }],
      isError: true,
      errorCode: 'TIMEOUT',
    }))
    expect((await runToolCall(b.tool, '{"n":1}', createToolContext({ cwd: dir }))).output.errorCode).toBe(
      'TIMEOUT',
    )
  })

  it('abort while running: a tool that honours the signal ends as TOOL_ABORTED', async () => {
    const controller = new AbortController()
    const { tool } = probe(
      (_input, ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => reject(new Error('stopped')))
          controller.abort()
        }),
    )
    const { output, ran } = await runToolCall(
      tool,
      '{"n":1}',
      createToolContext({ cwd: dir, signal: controller.signal }),
    )
    expect(ran).toBe(true)
    expect(output.errorCode).toBe('TOOL_ABORTED')
  })

  it('abort of a tool that ignores the signal: TOOL_ABORTED after the grace period', async () => {
    const controller = new AbortController()
    const { tool } = probe(() => {
      controller.abort()
      return new Promise(() => {}) // never settles
    })
    const { output } = await runToolCall(
      tool,
      '{"n":1}',
      createToolContext({ cwd: dir, signal: controller.signal }),
      {
        abortGraceMs: 10,
      },
    )
    expect(output.errorCode).toBe('TOOL_ABORTED')
  })

  it('an already-aborted signal: TOOL_ABORTED without running the tool', async () => {
    const controller = new AbortController()
    controller.abort()
    const { tool, runs } = probe(async () => 'ran')
    const outcome = await runToolCall(
      tool,
      '{"n":1}',
      createToolContext({ cwd: dir, signal: controller.signal }),
    )
    expect(outcome.output.errorCode).toBe('TOOL_ABORTED')
    expect(outcome.ran).toBe(false)
    expect(runs).toEqual([])
  })

  it('output over the cap is stored aside in full and the model gets a head+tail view naming the file', async () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `line ${i + 1}`)
    const full = lines.join('\n')
    const { tool } = probe(async () => full)
    const outputDir = join(dir, 'tool-outputs')
    const outcome = await runToolCall(tool, '{"n":1}', createToolContext({ cwd: dir, callId: 'call_big' }), {
      maxResultChars: 2000,
      outputDir,
    })
    expect(outcome.storedAside).toEqual({ path: join(outputDir, 'call_big.txt'), chars: full.length })
    expect(await readFile(join(outputDir, 'call_big.txt'), 'utf8')).toBe(full)
    const view = text(outcome.output)
    expect(view.length).toBeLessThanOrEqual(2000)
    expect(view.startsWith('line 1\nline 2\n')).toBe(true)
    expect(view.endsWith('line 4999\nline 5000')).toBe(true)
    expect(view).toContain(join(outputDir, 'call_big.txt'))
    expect(view).toContain(full.length.toLocaleString('en-US'))
    expect(outcome.output.isError).toBeUndefined()
  })

  it('a tool-level maxResultChars wins over the runtime default; output under the cap is untouched', async () => {
    const { tool } = probe(async () => 'x'.repeat(100))
    const small = { ...tool, maxResultChars: 50 } as Tool<{ n: number }>
    const a = await runToolCall(small, '{"n":1}', createToolContext({ cwd: dir }), { outputDir: dir })
    expect(a.storedAside?.chars).toBe(100)
    const b = await runToolCall(tool, '{"n":1}', createToolContext({ cwd: dir }), { outputDir: dir })
    expect(b.storedAside).toBeUndefined()
    expect(text(b.output)).toBe('x'.repeat(100))
  })

  it('never overwrites an earlier stored output of the same call id', async () => {
    const { tool } = probe(async (input) => String(input.n).repeat(200))
    const ctx = createToolContext({ cwd: dir, callId: '../../evil/id' })
    const a = await runToolCall(tool, '{"n":1}', ctx, { maxResultChars: 100, outputDir: dir })
    const b = await runToolCall(tool, '{"n":2}', ctx, { maxResultChars: 100, outputDir: dir })
    expect(a.storedAside?.path).not.toBe(b.storedAside?.path)
    // the model-supplied id cannot escape the output directory
    expect((await readdir(dir)).sort()).toEqual(['__.._evil_id-1.txt', '__.._evil_id.txt'])
    expect(a.storedAside?.path).toBe(join(dir, '__.._evil_id.txt'))
    expect(await readFile(a.storedAside!.path, 'utf8')).toBe('1'.repeat(200))
  })

  it('error outputs are capped too (a huge stack of text from a failing tool)', async () => {
    const { tool } = probe(async () => {
      throw new ToolError('BIG', 'y'.repeat(10_000))
    })
    const outcome = await runToolCall(tool, '{"n":1}', createToolContext({ cwd: dir }), {
      maxResultChars: 500,
      outputDir: dir,
    })
    expect(outcome.output.errorCode).toBe('BIG')
    expect(outcome.storedAside).toBeDefined()
    expect(text(outcome.output).length).toBeLessThanOrEqual(500)
  })

  it('property: stored file is the complete output; the view is its head + a notice + its tail', async () => {
    const { tool } = probe(async (input) => input.text ?? '')
    let i = 0
    let over = 0
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ unit: 'grapheme', maxLength: 3000, size: 'max' }),
          fc.array(fc.string({ maxLength: 80 }), { maxLength: 200, size: 'max' }).map((ls) => ls.join('\n')),
        ),
        fc.integer({ min: 200, max: 2500 }),
        async (s, cap) => {
          const callId = `c${i++}`
          const outcome = await runToolCall(
            tool,
            JSON.stringify({ n: 0, text: s }),
            createToolContext({ cwd: dir, callId }),
            { maxResultChars: cap, outputDir: dir },
          )
          const view = text(outcome.output)
          if (s.length <= cap) {
            expect(view).toBe(s)
            expect(outcome.storedAside).toBeUndefined()
            return
          }
          over++
          expect(outcome.storedAside).toBeDefined()
          const stored = await readFile(outcome.storedAside!.path, 'utf8')
          expect(stored).toBe(s)
          expect(outcome.storedAside!.chars).toBe(s.length)
          // Reconstruct from what the model sees plus the stored file: the notice says how many
          // characters were omitted; head + omitted middle (from the file) + tail is the full output.
          let rebuilt: string | undefined
          for (const m of view.matchAll(/\n\n\[… ([\d,]+) of ([\d,]+) characters omitted\. [^\n]*…\]\n\n/g)) {
            const omitted = Number(m[1]!.replace(/,/g, ''))
            const total = Number(m[2]!.replace(/,/g, ''))
            const head = view.slice(0, m.index)
            const tail = view.slice(m.index! + m[0].length)
            if (total !== s.length || head.length + omitted + tail.length !== total) continue
            rebuilt = head + stored.slice(head.length, head.length + omitted) + tail
            expect(view).toContain(outcome.storedAside!.path)
            break
          }
          expect(rebuilt).toBe(s)
          if (cap >= 600) expect(view.length).toBeLessThanOrEqual(cap)
        },
      ),
      { numRuns: 150 },
    )
    expect(over).toBeGreaterThan(20) // the property exercised the cap, not just short strings
  })

  it('property: truncateText head/tail reconstruct the input around the omitted middle', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'binary', maxLength: 2000, size: 'max' }),
        fc.integer({ min: 0, max: 2000 }),
        (s, cap) => {
          const { view, head, tail } = truncateText(s, cap, 'stored at /x')
          if (head + tail >= s.length) {
            expect(view).toBe(s)
            return
          }
          const omitted = s.slice(head, s.length - tail)
          expect(view.slice(0, head) + omitted + view.slice(view.length - tail)).toBe(s)
          expect(omitted.length).toBeGreaterThan(0)
        },
      ),
    )
  })
})

describe('isConcurrencySafe and toolFacts', () => {
  const base = probe(async () => '').tool
  it('defaults to false, resolves booleans and predicates, and fails closed on a throwing predicate', () => {
    expect(isConcurrencySafe(base, { n: 1 })).toBe(false)
    expect(isConcurrencySafe({ ...base, isConcurrencySafe: true }, { n: 1 })).toBe(true)
    const pred = { ...base, isConcurrencySafe: (input: { n: number }) => input.n > 5 }
    expect(isConcurrencySafe(pred, { n: 6 })).toBe(true)
    expect(isConcurrencySafe(pred, { n: 1 })).toBe(false)
    const throwing = {
      ...base,
      isConcurrencySafe: () => {
        throw new Error('x')
      },
    }
    expect(isConcurrencySafe(throwing, { n: 1 })).toBe(false)
  })

  it('toolFacts returns the tool facts or {}', () => {
    expect(toolFacts(base, { n: 1 }, dir)).toEqual({})
    const withFacts = {
      ...base,
      facts: (_i: { n: number }, cwd: string) => ({ rawPaths: ['a'], resolvedPaths: [join(cwd, 'a')] }),
    }
    expect(toolFacts(withFacts, { n: 1 }, dir)).toEqual({ rawPaths: ['a'], resolvedPaths: [join(dir, 'a')] })
  })
})
