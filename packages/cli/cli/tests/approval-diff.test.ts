import { mkdtemp, symlink, truncate, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough } from 'node:stream'
import type { ApprovalQuestion, ToolCallInfo } from '@keel/agent'
import { editFileTool, writeFileTool } from '@keel/fs'
import type { ToolCallId } from '@keel/llm'
import type { Tool } from '@keel/tools'
import { afterEach, describe, expect, it } from 'vitest'
import { MAX_DIFF_FILE_BYTES, proposedChange } from '../src/approval-diff.js'
import { createTerminalAnswerer } from '../src/terminal-answerer.js'
import { makeFifo, releaseFifos } from './fifo.js'

/** The question the approval chain puts for one `write_file` / `edit_file` call in `cwd`. */
function question(cwd: string, toolName: 'write_file' | 'edit_file', input: Record<string, unknown>) {
  const tool = (toolName === 'write_file' ? writeFileTool() : editFileTool()) as Tool<unknown>
  const info: ToolCallInfo = {
    turn: 1,
    step: 1,
    call: { type: 'tool-call', id: 'call_1' as ToolCallId, name: toolName, arguments: JSON.stringify(input) },
    tool,
    input,
    facts: tool.facts!(input, cwd),
  }
  const q: ApprovalQuestion = {
    info,
    id: 'q1',
    turn: 1,
    toolName,
    callId: 'call_1',
    reason: 'writes need approval',
    input,
    rule: { toolName },
    signal: new AbortController().signal,
  }
  return q
}

afterEach(releaseFifos)

const workspace = () => mkdtemp(join(tmpdir(), 'keel-diff-'))

describe('the approval diff reads only a regular file, and only so much of it', () => {
  it('diffs a regular file against what the call would leave', async () => {
    const cwd = await workspace()
    await writeFile(join(cwd, 'a.txt'), 'one\ntwo\nthree\n')
    const change = await proposedChange(
      question(cwd, 'edit_file', { path: 'a.txt', oldString: 'two', newString: '2' }),
    )
    expect(change).toMatchObject({ path: 'a.txt', added: 1, removed: 1, creates: false })
  })

  it('says a FIFO is not a file at once instead of waiting for a writer that never comes', async () => {
    const cwd = await workspace()
    makeFifo(join(cwd, 'pipe'))
    for (const q of [
      question(cwd, 'write_file', { path: 'pipe', content: 'x\n' }),
      question(cwd, 'edit_file', { path: 'pipe', oldString: 'a', newString: 'b' }),
    ]) {
      expect(await proposedChange(q)).toBe('no diff: pipe is a FIFO, not a regular file')
    }
  }, 5_000)

  it('does not read a device a symbolic link in the workspace points at', async () => {
    const cwd = await workspace()
    await symlink('/dev/zero', join(cwd, 'zero'))
    const change = await proposedChange(question(cwd, 'write_file', { path: 'zero', content: 'x\n' }))
    expect(change).toBe('no diff: zero is a character device, not a regular file')
  }, 5_000)

  it('shows no diff of a file over the limit, and reads none of it', async () => {
    const cwd = await workspace()
    const big = join(cwd, 'big.log')
    await writeFile(big, '')
    await truncate(big, 4 * 1024 ** 3) // sparse: 4 GiB that would take seconds and all memory to read
    const change = await proposedChange(question(cwd, 'write_file', { path: 'big.log', content: 'x\n' }))
    expect(change).toBe(
      `no diff: big.log is 4,294,967,296 bytes, over the ${MAX_DIFF_FILE_BYTES.toLocaleString('en-US')} shown as a diff`,
    )
  }, 5_000)

  it('shows no diff when too many lines change to compute one quickly', async () => {
    const cwd = await workspace()
    const lines = (tag: string) => Array.from({ length: 40_000 }, (_, i) => `${tag} ${i}`).join('\n')
    await writeFile(join(cwd, 'table.txt'), lines('old'))
    const change = await proposedChange(
      question(cwd, 'write_file', { path: 'table.txt', content: lines('new') }),
    )
    expect(change).toBe('no diff: more than 1,000 lines of table.txt change')
  }, 10_000)

  it('puts a write over a FIFO to the person at once, through the terminal answerer', async () => {
    const cwd = await workspace()
    makeFifo(join(cwd, 'pipe'))
    const input = new PassThrough()
    const output = new PassThrough()
    let printed = ''
    output.on('data', (chunk: Buffer) => {
      printed += chunk.toString('utf8')
    })
    const pending = createTerminalAnswerer({ input, output }).answer(
      question(cwd, 'write_file', { path: 'pipe', content: 'x\n' }),
    )
    for (let i = 0; i < 300 && !printed.includes('> '); i++) await new Promise((r) => setTimeout(r, 10))
    expect(printed).toContain('(no diff: pipe is a FIFO, not a regular file)')
    input.write('n\n')
    expect(await pending).toEqual({ outcome: 'reject', reason: 'rejected by the user' })
  }, 10_000)
})
