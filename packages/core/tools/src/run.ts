import { boundIssues, elide, errorMessage, isKeelError } from '@keel/base'
import type { ImageBlock, TextBlock } from '@keel/llm'
import { compileExactCheck } from '@keel/session'
import type { z } from 'zod'
import { capOutput, capsFor } from './cap.js'
import { errorOutput } from './error-output.js'
import { ToolError, type ToolRuntimeErrorCode } from './errors.js'
import type { Tool, ToolContext, ToolOutput } from './tool.js'

/** How long a tool gets, after its abort signal fired, to stop on its own before the runtime gives up on it. */
export const DEFAULT_ABORT_GRACE_MS = 5_000

/**
 * The per-call deadline when neither the tool nor the caller sets one: 5 minutes. Tools
 * that take a timeout from the model (`bash`) set their own, longer, deadline.
 */
export const DEFAULT_TOOL_TIMEOUT_MS = 300_000

/** Options of {@link runToolCall} and {@link executeTool}. */
export interface RunToolCallOptions {
  /**
   * The text cap used when the tool sets no `maxResultChars` of its own. Default
   * `DEFAULT_MAX_RESULT_CHARS` (30,000).
   */
  maxResultChars?: number
  /**
   * Base64 characters of image blocks one result may carry; images past it are stored
   * aside. Default `DEFAULT_MAX_IMAGE_CHARS` (640 KiB).
   */
  maxImageChars?: number
  /**
   * Where over-long outputs are written, one file per call (`<callId>.txt`); the agent passes
   * `<sessionDir>/tool-outputs`. Without it: `<os tmpdir>/keel-tool-outputs/<sessionId>`.
   */
  outputDir?: string
  /**
   * Bytes one call may store aside (text and images together); beyond it output is
   * discarded with a note. Default `DEFAULT_MAX_STORED_BYTES` (100 MiB).
   */
  maxStoredBytes?: number
  /**
   * The per-call deadline when the tool sets no `timeoutMs` of its own. Default
   * {@link DEFAULT_TOOL_TIMEOUT_MS}.
   */
  timeoutMs?: number
  /** Per-tool deadlines by tool name (operator configuration); they win over the tool's own `timeoutMs`. */
  timeoutsByTool?: Readonly<Record<string, number>>
  /**
   * After the abort signal fires, how long to wait for the tool to settle (so a shell tool
   * can report its partial output) before returning `TOOL_ABORTED` without it. Default
   * {@link DEFAULT_ABORT_GRACE_MS}.
   */
  abortGraceMs?: number
}

/** The outcome of one tool call, ready for the `tool/result` event. */
export interface ToolCallOutcome {
  /** What the model gets (well-formed text, already truncated when the output was over the caps). */
  output: ToolOutput
  /** Where the complete output was written when it was over the cap, and its length in UTF-16 units. */
  storedAside?: { path: string; chars: number }
  /** Whether the tool's `call` ran (false for invalid arguments or an already-aborted signal). */
  ran: boolean
}

/** The result of {@link parseToolInput}: the validated input, or the error output the model gets. */
export type ParsedToolInput<Input> = { ok: true; input: Input } | { ok: false; output: ToolOutput }

function runtimeError(code: ToolRuntimeErrorCode, message: string): ToolOutput {
  return errorOutput(code, message)
}

/**
 * Renders zod issues as lines the model can act on: `- offset: expected number, received string`.
 * Bounded: at most `MAX_ERROR_ISSUES` lines (then how many more), keys and messages elided
 * past their limits, so arguments with a megabyte key give a few hundred characters.
 */
export function formatZodIssues(error: z.ZodError): string {
  const { issues, more } = boundIssues(error.issues)
  const lines = issues.map((issue) => `- ${issue.path === '' ? '(arguments)' : issue.path}: ${issue.message}`)
  if (more > 0) lines.push(`- … and ${more} more issue${more === 1 ? '' : 's'}`)
  return lines.join('\n')
}

/**
 * Parses the raw arguments text the model sent and validates it against the tool's schema.
 * Empty or whitespace-only text counts as `{}` (some models send nothing for tools without
 * parameters). Failures come back as error outputs: `TOOL_INPUT_INVALID_JSON` (with the
 * parser's complaint) or `TOOL_INPUT_INVALID` (one line per zod issue).
 */
export function parseToolInput<Input>(tool: Tool<Input>, rawArguments: string): ParsedToolInput<Input> {
  let parsed: unknown
  const text = rawArguments.trim() === '' ? '{}' : rawArguments
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    const preview = elide(rawArguments, 200)
    const complaint = elide(errorMessage(error))
    return {
      ok: false,
      output: runtimeError(
        'TOOL_INPUT_INVALID_JSON',
        `the arguments for ${tool.name} are not valid JSON (${complaint}). You sent: ${preview}\nSend one JSON object matching the tool's parameters; the tool was not run.`,
      ),
    }
  }
  // A schema whose output is what it accepts: the compiled check (zod's verdict, property-
  // tested) decides, and the parsed value is the input; zod builds its copy only otherwise.
  const exact = compileExactCheck(tool.inputSchema as z.ZodType<unknown>)
  if (exact?.(parsed)) return { ok: true, input: parsed as Input }
  const result = tool.inputSchema.safeParse(parsed)
  if (!result.success) {
    return {
      ok: false,
      output: runtimeError(
        'TOOL_INPUT_INVALID',
        `the arguments for ${tool.name} do not match its parameters:\n${formatZodIssues(result.error)}\nFix these and call ${tool.name} again; the tool was not run.`,
      ),
    }
  }
  return { ok: true, input: result.data }
}

type Settled = { kind: 'value'; value: unknown } | { kind: 'error'; error: unknown } | { kind: 'abandoned' }

/**
 * One call in flight: the controller its tool sees (aborted by the caller's signal or at the
 * deadline), the deadline timer, and after an abort the grace timer that gives the tool up.
 * It is itself the listener on the caller's signal and its timers' argument: no closure,
 * listener or options object per call beyond this one.
 */
class CallRun {
  readonly controller = new AbortController()
  deadlinePassed = false
  readonly #tool: Tool<unknown>
  readonly #timeoutMs: number
  readonly #graceMs: number
  readonly #caller: AbortSignal
  readonly #deadline: ReturnType<typeof setTimeout>
  #grace: ReturnType<typeof setTimeout> | undefined
  #resolve: ((settled: Settled) => void) | undefined

  constructor(tool: Tool<unknown>, timeoutMs: number, graceMs: number, caller: AbortSignal) {
    this.#tool = tool
    this.#timeoutMs = timeoutMs
    this.#graceMs = graceMs
    this.#caller = caller
    caller.addEventListener('abort', this)
    this.#deadline = setTimeout(passDeadline, timeoutMs, this)
  }

  /** The caller's signal fired. */
  handleEvent(): void {
    this.#abort(this.#caller.reason)
  }

  passDeadline(): void {
    this.deadlinePassed = true
    const name = this.#tool.name
    const timeoutMs = this.#timeoutMs
    this.#abort(
      new ToolDeadlineError('TOOL_TIMEOUT', `${name} passed its ${seconds(timeoutMs)} deadline`, {
        tool: name,
        timeoutMs,
      }),
    )
  }

  /** Aborts the tool's signal once; from then on the tool has the grace period to settle. */
  #abort(reason: unknown): void {
    if (this.controller.signal.aborted) return
    this.controller.abort(reason)
    this.#grace = setTimeout(abandon, this.#graceMs, this)
    this.#grace.unref?.()
  }

  /** How `promise` (the tool's call) settles, or `abandoned` once the grace after an abort ran out. */
  settle(promise: Promise<unknown>): Promise<Settled> {
    return new Promise<Settled>((resolve) => {
      this.#resolve = resolve
      promise.then(
        (value) => this.finish({ kind: 'value', value }),
        (error) => this.finish({ kind: 'error', error }),
      )
    })
  }

  /** Settles the call (the first outcome wins) and lets go of the caller's signal and the timers. */
  finish(settled: Settled): void {
    const resolve = this.#resolve
    if (resolve === undefined) return
    this.#resolve = undefined
    clearTimeout(this.#deadline)
    if (this.#grace !== undefined) clearTimeout(this.#grace)
    this.#caller.removeEventListener('abort', this)
    resolve(settled)
  }
}

function passDeadline(run: CallRun): void {
  run.passDeadline()
}

function abandon(run: CallRun): void {
  run.finish({ kind: 'abandoned' })
}

function normalize(tool: Tool<unknown>, value: unknown): ToolOutput {
  if (typeof value === 'string') return { content: [{ type: 'text', text: value }] }
  const v = value as Partial<ToolOutput> | null
  const ok =
    v !== null &&
    typeof v === 'object' &&
    Array.isArray(v.content) &&
    v.content.every(
      (b) =>
        (b?.type === 'text' && typeof b.text === 'string') ||
        (b?.type === 'image' && typeof b.data === 'string' && typeof b.mediaType === 'string'),
    )
  if (!ok) {
    return runtimeError(
      'TOOL_FAILED',
      `${tool.name} returned a malformed result (expected a string or { content: [text/image blocks] }); this is a bug in the tool, not in your arguments.`,
    )
  }
  const output: ToolOutput = { content: v.content as Array<TextBlock | ImageBlock> }
  const aside = v.storedAside
  if (
    aside !== undefined &&
    typeof aside?.path === 'string' &&
    aside.path !== '' &&
    Number.isInteger(aside.chars) &&
    aside.chars >= 0
  )
    output.storedAside = { path: aside.path, chars: aside.chars }
  if (v.isError) {
    output.isError = true
    output.errorCode = typeof v.errorCode === 'string' && v.errorCode !== '' ? v.errorCode : 'TOOL_FAILED'
  }
  return output
}

function fromThrown(tool: Tool<unknown>, error: unknown, signal: AbortSignal): ToolOutput {
  if (isKeelError(error) && error.code !== 'TOOL_ABORTED') return errorOutput(error.code, error.message)
  if (
    signal.aborted ||
    isKeelError(error, 'TOOL_ABORTED') ||
    (error instanceof Error && error.name === 'AbortError')
  ) {
    return runtimeError(
      'TOOL_ABORTED',
      `${tool.name} was cancelled before it finished (the turn was aborted).`,
    )
  }
  const message = errorMessage(error)
  return runtimeError('TOOL_FAILED', `${tool.name} failed: ${message}`)
}

/** The reason a call's signal carries when its deadline passed. */
export class ToolDeadlineError extends ToolError<'TOOL_TIMEOUT'> {}

/** The deadline of one call: the operator's for this tool, else the tool's own (a number or computed from the input), else the caller's default, else {@link DEFAULT_TOOL_TIMEOUT_MS}. */
export function toolTimeoutMs<Input>(
  tool: Tool<Input>,
  input: Input,
  options: RunToolCallOptions = {},
): number {
  const configured = options.timeoutsByTool?.[tool.name]
  if (typeof configured === 'number' && Number.isFinite(configured) && configured > 0) return configured
  const own = tool.timeoutMs
  let ms: unknown
  try {
    ms = typeof own === 'function' ? own(input) : own
  } catch {
    ms = undefined // a throwing computation falls back to the caller's deadline
  }
  if (typeof ms === 'number' && Number.isFinite(ms) && ms > 0) return ms
  return options.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`
}

function timedOut(tool: Tool<unknown>, ms: number, output: ToolOutput | undefined): ToolOutput {
  const note = `${tool.name} did not finish within its ${seconds(ms)} deadline and was stopped.`
  const partial = output?.content ?? []
  const text = partial.length > 0 ? 'Its output so far is above. ' : ''
  return {
    content: [
      ...partial,
      {
        type: 'text',
        text: `[TOOL_TIMEOUT] ${note} ${text}Narrow the request or split it into smaller calls.`,
      },
    ],
    isError: true,
    errorCode: 'TOOL_TIMEOUT',
    ...(output?.storedAside ? { storedAside: output.storedAside } : {}),
  }
}

/**
 * Runs an already-validated input: calls the tool with a signal that fires on the caller's
 * abort or at the call's deadline ({@link toolTimeoutMs}), normalizes a string result, maps a
 * thrown {@link ToolError} (or any `KeelError`) to its code, an abort to `TOOL_ABORTED`, a
 * passed deadline to `TOOL_TIMEOUT` and anything else to `TOOL_FAILED`, then caps the output
 * (text, images, well-formed text; see `capOutput`). A tool that does not stop within
 * `abortGraceMs` of its signal is abandoned. Never throws for anything the tool does.
 */
export async function executeTool<Input>(
  tool: Tool<Input>,
  input: Input,
  context: ToolContext,
  options: RunToolCallOptions = {},
): Promise<ToolCallOutcome> {
  const t = tool as Tool<unknown>
  const caps = capsFor(t, context, options)
  if (context.signal.aborted) {
    return {
      output: runtimeError('TOOL_ABORTED', `${t.name} was not run: the turn was aborted.`),
      ran: false,
    }
  }
  const timeoutMs = toolTimeoutMs(tool, input, options)
  // One controller aborted by the caller's signal or by the deadline (linked by hand:
  // `AbortSignal.any` costs more than the rest of a small tool call).
  const run = new CallRun(t, timeoutMs, options.abortGraceMs ?? DEFAULT_ABORT_GRACE_MS, context.signal)
  const signal = run.controller.signal
  const inner: ToolContext = { ...context, signal, aside: caps.aside }
  const promise = (async () => t.call(input, inner))()
  const settled = await run.settle(promise)
  const expired = run.deadlinePassed && !context.signal.aborted
  let output: ToolOutput
  if (settled.kind === 'value') {
    output = normalize(t, settled.value)
    if (expired && output.isError && (output.errorCode === 'TOOL_ABORTED' || output.errorCode === 'TIMEOUT'))
      output = timedOut(t, timeoutMs, output)
  } else if (settled.kind === 'error') {
    output = fromThrown(t, settled.error, signal)
    if (expired && output.errorCode === 'TOOL_ABORTED') output = timedOut(t, timeoutMs, undefined)
  } else {
    promise.catch(() => {}) // it may still reject later; nobody is listening any more
    output = expired
      ? timedOut(t, timeoutMs, undefined)
      : runtimeError(
          'TOOL_ABORTED',
          `${t.name} was cancelled and did not stop in time; its result is unknown.`,
        )
  }
  return { ...(await capOutput(output, context.callId, caps)), ran: true }
}

/**
 * The single place that executes one tool call from the model: parse the raw arguments
 * text, validate it, run the tool, map failures to error outputs with codes, cap the size.
 * Invalid arguments never reach the tool. Never throws for anything the model or the tool
 * does. Hosts that must look at the validated input first (permission checks, hooks) use
 * {@link parseToolInput} and {@link executeTool}, which this is made of.
 */
export async function runToolCall<Input>(
  tool: Tool<Input>,
  rawArguments: string,
  context: ToolContext,
  options: RunToolCallOptions = {},
): Promise<ToolCallOutcome> {
  const parsed = parseToolInput(tool, rawArguments)
  if (!parsed.ok) {
    const caps = capsFor(tool as Tool<unknown>, context, options)
    return { ...(await capOutput(parsed.output, context.callId, caps)), ran: false }
  }
  return executeTool(tool, parsed.input, context, options)
}
