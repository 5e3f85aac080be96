import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { createToolContext, runToolCall, type Tool, type ToolOutput } from '@keel/tools'

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
  await rm(dir, { recursive: true, force: true })
}

/** Runs a tool through the real runtime with JSON arguments. */
export async function call<I>(tool: Tool<I>, cwd: string, args: unknown, signal?: AbortSignal) {
  const outcome = await runToolCall(tool, JSON.stringify(args), createToolContext({ cwd, signal }), {
    outputDir: join(cwd, '.tool-outputs'),
  })
  return { ...outcome, text: textOf(outcome.output), code: outcome.output.errorCode }
}

export function textOf(output: ToolOutput): string {
  return output.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n')
}
