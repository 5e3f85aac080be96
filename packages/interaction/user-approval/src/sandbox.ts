import { join } from 'node:path'
import type { Tool, ToolContext, ToolOutput } from '@keel/tools'
import { type CommandLimits, osSandboxAvailable, SandboxError, wrapCommand } from './os-sandbox.js'
import { findProtectedPaths } from './protected.js'
import './services.js'

const sandboxed = new WeakSet<object>()

/** Whether `tool` is a {@link sandboxShellTool} (its commands run inside the OS sandbox). */
export function isSandboxedShellTool(tool: object): boolean {
  return sandboxed.has(tool)
}

/**
 * The limits of shell commands when no approval plugin runs in the agent: the working
 * directory, none of its `.git`/`.keel` at any depth, no network.
 */
async function defaultLimits(context: ToolContext): Promise<CommandLimits> {
  return {
    mode: 'workspace_write',
    writableRoots: [context.cwd],
    denyWrite: await findProtectedPaths([context.cwd], ['.git', '.keel']).then((found) => [
      ...new Set([join(context.cwd, '.git'), join(context.cwd, '.keel'), ...found]),
    ]),
    denyRead: [],
    allowedDomains: [],
  }
}

/**
 * Wraps a shell tool (any tool whose input has a `command` line, such as `bash`) so each
 * command runs inside the OS sandbox under the limits the agent's `sandbox.limits` service
 * gives (the approval plugin provides it): `workspace_write` may write only the workspace
 * roots (never a `.git`/`.keel` at any depth), `read_only` nothing, and neither reaches the
 * network unless domains are allowed; `danger_full_access` runs the command as is. The
 * approval plugin lets such a tool run without asking under `on_request`; an unwrapped
 * shell tool is asked about, since nothing contains it. Name, schema, annotations and facts
 * are the wrapped tool's.
 */
export function sandboxShellTool<Input extends { command: string }>(tool: Tool<Input>): Tool<Input> {
  const wrapped: Tool<Input> = {
    ...tool,
    async call(input: Input, context: ToolContext): Promise<ToolOutput | string> {
      const service = context.services?.get('sandbox.limits')
      const limits = service ? await service.current() : await defaultLimits(context)
      if (limits.mode === 'danger_full_access') return tool.call(input, context)
      if (!(await osSandboxAvailable())) {
        // The approval plugin asked before letting an uncontained command run; without it, refuse.
        if (service) return tool.call(input, context)
        throw new SandboxError(
          'SANDBOX_WRAP_FAILED',
          'no OS sandbox is available here (bubblewrap and socat on Linux), and no approval plugin asked about this command',
        )
      }
      const { command, release } = await wrapCommand(input.command, limits, {
        signal: context.signal,
        id: context.callId,
      })
      try {
        return await tool.call({ ...input, command }, context)
      } finally {
        await release()
      }
    },
  }
  sandboxed.add(wrapped)
  return wrapped
}
