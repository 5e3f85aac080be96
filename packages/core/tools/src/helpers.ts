import type { ToolCallId } from '@keel/llm'
import { Session } from '@keel/session'
import { noServices, type ServiceView } from './services.js'
import type { Tool, ToolCallFacts, ToolContext, ToolProgress } from './tool.js'

/**
 * Whether this call may run in parallel with other concurrency-safe calls. Resolves the
 * tool's boolean or predicate; absent, or a predicate that throws, means `false`
 * (fail-closed).
 */
export function isConcurrencySafe<Input>(tool: Tool<Input>, input: Input): boolean {
  const flag = tool.isConcurrencySafe
  if (typeof flag === 'function') {
    try {
      return flag(input) === true
    } catch {
      return false
    }
  }
  return flag === true
}

/** The facts of a call for the permission decision; `{}` when the tool declares none. */
export function toolFacts<Input>(tool: Tool<Input>, input: Input, cwd: string): ToolCallFacts {
  return tool.facts?.(input, cwd) ?? {}
}

/** What {@link createToolContext} needs; everything but `cwd` has a default. */
export interface ToolContextInit {
  cwd: string
  /** Default `call_<n>`. */
  callId?: string
  /** Default: a signal that never fires. */
  signal?: AbortSignal
  /** Default: a blank in-memory session (for scripts and tests). */
  session?: Session
  progress?: (update: ToolProgress) => void
  /** Default: no services. */
  services?: ServiceView
}

let counter = 0

/** Builds a {@link ToolContext} for running tools outside the agent (scripts, tests, REPLs). */
export function createToolContext(init: ToolContextInit): ToolContext {
  const progress = init.progress ?? (() => {})
  return {
    cwd: init.cwd,
    callId: (init.callId ?? `call_${++counter}`) as ToolCallId,
    signal: init.signal ?? new AbortController().signal,
    session: init.session ?? Session.create(`tool-context-${process.pid}-${counter}`),
    progress,
    services: init.services ?? noServices,
  }
}
