import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import type { ToolCallId } from '@keel/llm'
import { Session } from '@keel/session'
import {
  createToolContext,
  type RunToolCallOptions,
  runToolCall,
  type Tool,
  type ToolOutput,
} from '@keel/tools'

/** A fresh temp directory with the given files (path → content). */
export async function workspace(files: Record<string, string | Buffer> = {}): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'keel-fs-'))
  for (const [path, content] of Object.entries(files)) {
    await mkdir(dirname(join(dir, path)), { recursive: true })
    await writeFile(join(dir, path), content)
  }
  return dir
}

export async function cleanup(dir: string): Promise<void> {
  sessions.delete(dir)
  await rm(dir, { recursive: true, force: true })
}

/** One logged session per working directory, with an open turn and step, as the agent keeps it. */
const sessions = new Map<string, { session: Session; calls: number }>()
let sessionCounter = 0

export function sessionFor(cwd: string): Session {
  let entry = sessions.get(cwd)
  if (!entry) {
    const session = Session.create(`fs-test-${process.pid}-${++sessionCounter}`)
    session.append('turn/start', { turn: 1 })
    session.append('step/start', { turn: 1, step: 1 })
    entry = { session, calls: 0 }
    sessions.set(cwd, entry)
  }
  return entry.session
}

/**
 * Runs a tool through the real runtime with JSON arguments, logging `tool/call` before and
 * `tool/result` after in the working directory's session, as the agent does.
 */
export async function call<I>(
  tool: Tool<I>,
  cwd: string,
  args: unknown,
  signal?: AbortSignal,
  options: RunToolCallOptions = {},
) {
  const session = sessionFor(cwd)
  const entry = sessions.get(cwd)!
  const callId = `call_${++entry.calls}` as ToolCallId
  const raw = JSON.stringify(args)
  session.append('tool/call', { turn: 1, step: 1, callId, name: tool.name, arguments: raw })
  const outcome = await runToolCall(tool, raw, createToolContext({ cwd, signal, session, callId }), {
    outputDir: join(cwd, '.tool-outputs'),
    ...options,
  })
  session.append('tool/result', {
    turn: 1,
    step: 1,
    message: {
      role: 'tool',
      toolCallId: callId,
      toolName: tool.name,
      content: outcome.output.content,
      ...(outcome.output.isError ? { isError: true } : {}),
    },
  })
  return { ...outcome, text: textOf(outcome.output), code: outcome.output.errorCode }
}

export function textOf(output: ToolOutput): string {
  return output.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n')
}
