import type { ImageBlock, TextBlock, ToolCallId } from '@keel/llm'
import type { Session } from '@keel/session'
import type { z } from 'zod'
import type { AsideConfig } from './aside.js'
import type { ServiceView } from './services.js'

/**
 * What a tool is — never whether it may run (that is the permission decision's job).
 * Set them truthfully: the approval policy reads them.
 */
export interface ToolAnnotations {
  /** Only reads; changes nothing anywhere. */
  readOnly: boolean
  /** May destroy or overwrite data (delete, overwrite, run arbitrary commands). */
  destructive: boolean
  /** Reaches outside the workspace (network, other processes' state). */
  openWorld: boolean
  /** Calling twice with the same arguments has the effect of calling once. */
  idempotent: boolean
}

/**
 * The facts of one concrete call that a permission check needs: the paths as the model
 * wrote them (`rawPaths`) and, at the same index, the absolute path the call uses for each
 * (`resolvedPaths`, lexical against the working directory — the check follows symbolic
 * links itself), and the command line for shell tools. They must cover everything the
 * call can reach: for a pattern, the directory its fixed prefix leads to from the search
 * path (`../outside/*` → `<cwd>/../outside`), paired with the pattern.
 */
export interface ToolCallFacts {
  rawPaths?: string[]
  resolvedPaths?: string[]
  command?: string
}

/**
 * A tool's own judgment of one call (`checkPermissions`): `allow`, `ask` or `deny` with a
 * reason, and for `deny` an optional code the model can act on.
 */
export interface ToolPermissionCheck {
  behavior: 'allow' | 'ask' | 'deny'
  reason: string
  errorCode?: string
}

/** One progress report of a running tool (shown live, not persisted). */
export interface ToolProgress {
  message: string
  /** 0..1 when the tool knows how far it is. */
  fraction?: number
}

/** What a running tool gets besides its arguments. */
export interface ToolContext {
  /** Aborted when the turn is cancelled; long-running tools must stop promptly. */
  readonly signal: AbortSignal
  /** The agent's working directory; relative paths resolve against it. */
  readonly cwd: string
  readonly callId: ToolCallId
  /** The session, read-only: tools observe the log, they never append to it. */
  readonly session: Session
  /** Reports progress to live UIs. */
  progress(update: ToolProgress): void
  /**
   * The agent's services (`sandbox.limits`, …): how a tool given to the agent, not
   * registered by a plugin, reads what the plugins provide. Absent outside an agent.
   */
  readonly services?: ServiceView
  /**
   * Where this call may store output too large for the log and how many bytes it may store
   * (the per-call disk cap). {@link executeTool} always sets it; a tool that streams more
   * output than it can hold in memory writes it there with {@link AsideFile}.
   */
  readonly aside?: AsideConfig
}

/** What a tool returns. A plain string is shorthand for one text block. */
export interface ToolOutput {
  content: Array<TextBlock | ImageBlock>
  /** The call failed; `content` tells the model what went wrong and what to do. */
  isError?: boolean
  /** A stable code the model can act on when `isError` (`FILE_NOT_FOUND`, `TIMEOUT`, …). */
  errorCode?: string
  /**
   * Set by a tool that already wrote its complete output to a stored-aside file (see
   * `ToolContext.aside`) and returns only a window of it: the runtime names this file
   * instead of storing the text again. `chars` is the length of the complete output.
   */
  storedAside?: { path: string; chars: number }
}

/**
 * A predicate over a tool's input, declared bivariantly so a `Tool<Specific>` is assignable
 * to `Tool<unknown>` (registries hold tools of many input types).
 */
export type InputPredicate<Input> = { check(input: Input): boolean }['check']

/** A value computed from a tool's input, declared bivariantly like {@link InputPredicate}. */
export type InputValue<Input, T> = { compute(input: Input): T }['compute']

/** A tool the model can call. */
export interface Tool<Input = unknown> {
  /** `^[a-zA-Z0-9_-]{1,64}$`, unique within an agent. */
  readonly name: string
  /** What the tool does and when to use it, written for the model. */
  readonly description: string
  /** Validates the parsed arguments; sent to the model as JSON Schema. */
  readonly inputSchema: z.ZodType<Input>
  readonly annotations: ToolAnnotations
  /**
   * May run in parallel with other concurrency-safe calls of the same step. Default false
   * (fail-closed): only pure readers should say true.
   */
  readonly isConcurrencySafe?: boolean | InputPredicate<Input>
  /**
   * Output longer than this many characters is stored beside the session and the model
   * gets a truncated view naming the location. Default: the runtime's cap.
   */
  readonly maxResultChars?: number
  /**
   * The per-call deadline in milliseconds (a number, or computed from the input, e.g. from
   * a timeout the model asked for). When it passes, the call's signal is aborted and the
   * call ends as `TOOL_TIMEOUT`. Default: the runtime's (`DEFAULT_TOOL_TIMEOUT_MS`).
   */
  readonly timeoutMs?: number | InputValue<Input, number>
  /** The facts of a call for the permission decision (paths, command). */
  facts?(input: Input, cwd: string): ToolCallFacts
  /**
   * The tool's own permission judgment of a call, consulted after the sandbox limits (which
   * it cannot lift); `undefined` leaves the decision to the approval policy. Pure: no I/O.
   */
  checkPermissions?(input: Input, facts: ToolCallFacts): ToolPermissionCheck | undefined
  call(input: Input, context: ToolContext): Promise<ToolOutput | string>
}

/** Identity helper that infers `Input` from the schema. */
export function defineTool<Input>(tool: Tool<Input>): Tool<Input> {
  return tool
}
