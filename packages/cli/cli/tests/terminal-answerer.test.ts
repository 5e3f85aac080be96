import { PassThrough } from 'node:stream'
import type { ApprovalQuestion, ToolCallInfo } from '@keel/agent'
import type { ToolCallId } from '@keel/llm'
import { bashTool } from '@keel/shell'
import type { Tool } from '@keel/tools'
import { describe, expect, it } from 'vitest'
import { createTerminalAnswerer, parseAnswer } from '../src/terminal-answerer.js'

function question(command: string, signal = new AbortController().signal, id = 'q1'): ApprovalQuestion {
  const tool = bashTool() as Tool<unknown>
  const info: ToolCallInfo = {
    turn: 1,
    step: 1,
    call: {
      type: 'tool-call',
      id: `call_${id}` as ToolCallId,
      name: 'bash',
      arguments: JSON.stringify({ command }),
    },
    tool,
    input: { command },
    facts: { command },
  }
  return {
    info,
    id,
    turn: 1,
    toolName: 'bash',
    callId: `call_${id}`,
    reason: 'no OS sandbox',
    input: {},
    rule: { toolName: 'bash', command },
    signal,
  }
}

function terminal() {
  const input = new PassThrough()
  const output = new PassThrough()
  let printed = ''
  output.on('data', (chunk: Buffer) => {
    printed += chunk.toString('utf8')
  })
  const answerer = createTerminalAnswerer({ input, output })
  return { input, answerer, printed: () => printed }
}

/**
 * Resolves once `predicate` holds for the printed text. Polls every 10 ms for up to 30 s: a
 * question whose diff reads the file waits for the thread pool, which a loaded machine makes
 * slow, so a count of event-loop turns is not enough.
 */
async function until(predicate: () => boolean): Promise<void> {
  for (let i = 0; i < 3000 && !predicate(); i++) await new Promise((r) => setTimeout(r, 10))
  expect(predicate()).toBe(true)
}

describe('the terminal answerer over a stream pair', () => {
  it('shows the command and the reason, and reads allow once / for the session / reject with a reason', async () => {
    const t = terminal()
    const first = t.answerer.answer(question('make test'))
    await until(() => t.printed().includes('> '))
    expect(t.printed()).toContain('Approval needed: bash')
    expect(t.printed()).toContain('command: make test')
    expect(t.printed()).toContain('why: no OS sandbox')
    expect(t.printed()).toContain(
      '[a] allow `make test` with bash (this exact command line) for this session',
    )
    t.input.write('y\n')
    expect(await first).toEqual({ outcome: 'allow-once' })
    const second = t.answerer.answer(question('make test'))
    t.input.write('a\r\n')
    expect(await second).toEqual({ outcome: 'allow-session' })
    const third = t.answerer.answer(question('rm -rf /'))
    t.input.write('n  that deletes everything\n')
    expect(await third).toEqual({ outcome: 'reject', reason: 'that deletes everything' })
  })

  it('asks again on an unrecognized line, and rejects after too many', async () => {
    const t = terminal()
    const answer = t.answerer.answer(question('ls'))
    t.input.write('maybe\nnope\n')
    t.input.write('yes\n')
    expect(await answer).toEqual({ outcome: 'allow-once' })
    expect(t.printed().match(/Please answer/g)).toHaveLength(2)
    const rejected = t.answerer.answer(question('ls'))
    t.input.write('?\n?\n?\n')
    expect(await rejected).toEqual({ outcome: 'reject', reason: 'no valid answer was given' })
  })

  it('puts parallel questions one at a time, in order', async () => {
    const t = terminal()
    const a = t.answerer.answer(question('first', undefined, 'a'))
    const b = t.answerer.answer(question('second', undefined, 'b'))
    await until(() => t.printed().includes('command: first'))
    expect(t.printed()).not.toContain('command: second')
    t.input.write('y\n')
    await until(() => t.printed().includes('command: second'))
    t.input.write('n no\n')
    expect(await a).toEqual({ outcome: 'allow-once' })
    expect(await b).toEqual({ outcome: 'reject', reason: 'no' })
  })

  it('answers nothing once the input has ended (the chain then fails closed)', async () => {
    const t = terminal()
    t.input.end()
    expect(await t.answerer.answer(question('ls'))).toBeUndefined()
  })

  it('stops waiting when the question is aborted', async () => {
    const t = terminal()
    const controller = new AbortController()
    const pending = t.answerer.answer(question('sleep', controller.signal))
    await until(() => t.printed().includes('> '))
    controller.abort()
    expect(await pending).toBeUndefined()
    // the next question still reads the next line
    const next = t.answerer.answer(question('ls'))
    t.input.write('y\n')
    expect(await next).toEqual({ outcome: 'allow-once' })
  })

  it('does not print control characters a model could plant in a command', async () => {
    const t = terminal()
    const pending = t.answerer.answer(question('echo \u001b[2J\u001b]0;evil\u0007 done'))
    await until(() => t.printed().includes('> '))
    expect(t.printed()).not.toContain('\u001b')
    expect(t.printed()).not.toContain('\u0007')
    t.input.write('n\n')
    expect(await pending).toEqual({ outcome: 'reject', reason: 'rejected by the user' })
  })

  it('parses answers strictly', () => {
    expect(parseAnswer('Y')).toEqual({ outcome: 'allow-once' })
    expect(parseAnswer(' always ')).toEqual({ outcome: 'allow-session' })
    expect(parseAnswer('no: too risky')).toEqual({ outcome: 'reject', reason: 'too risky' })
    expect(parseAnswer('nope')).toBeUndefined()
    expect(parseAnswer('yesterday')).toBeUndefined()
    expect(parseAnswer('')).toBeUndefined()
  })
})

describe('one-shot questions use the interactive UI’s keys and show an edit as a diff', () => {
  it('prints a write_file call as a unified diff of the file, then y / a / n', async () => {
    const { mkdtemp, writeFile } = await import('node:fs/promises')
    const { tmpdir } = await import('node:os')
    const { join } = await import('node:path')
    const { writeFileTool } = await import('@keel/fs')
    const dir = await mkdtemp(join(tmpdir(), 'keel-answerer-'))
    await writeFile(join(dir, 'a.txt'), 'one\ntwo\nthree\n')
    const tool = writeFileTool() as Tool<unknown>
    const input = { path: 'a.txt', content: 'one\n2\nthree\n' }
    const facts = tool.facts!(input, dir)
    const q = question('unused')
    const write: ApprovalQuestion = {
      ...q,
      toolName: 'write_file',
      input,
      rule: { toolName: 'write_file' },
      info: { ...q.info, tool, input, facts, call: { ...q.info.call, name: 'write_file' } },
    }
    const t = terminal()
    let before = 0
    const input2 = new PassThrough()
    const answerer = createTerminalAnswerer({
      input: input2,
      output: new PassThrough().on('data', () => {}),
      beforeQuestion: () => before++,
    })
    const printed: string[] = []
    const out = new PassThrough()
    out.on('data', (chunk: Buffer) => printed.push(chunk.toString('utf8')))
    const shown = createTerminalAnswerer({ input: t.input, output: out })
    const pending = shown.answer(write)
    await until(() => printed.join('').includes('> '))
    const text = printed.join('')
    expect(text).toContain('a.txt: +1 −1')
    expect(text).toContain('    -two')
    expect(text).toContain('    +2')
    expect(text).toContain(
      '[y] allow once   [a] allow every write_file call for this session   [n <reason>] reject',
    )
    t.input.write('n not that\n')
    expect(await pending).toEqual({ outcome: 'reject', reason: 'not that' })
    const again = answerer.answer(question('ls'))
    await until(() => before === 1)
    input2.write('y\n')
    expect(await again).toEqual({ outcome: 'allow-once' })
  })
})
