import { mkdir, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isKeelError } from '@keel/base'
import type { ImageBlock, TextBlock } from '@keel/llm'
import type { z } from 'zod'
import type { ToolRuntimeErrorCode } from './errors.js'
import type { Tool, ToolContext, ToolOutput } from './tool.js'

/** The result size cap used when neither the tool nor the caller sets one. */
export const DEFAULT_MAX_RESULT_CHARS = 30_000

/** How long a tool gets, after its abort signal fired, to stop on its own before the runtime gives up on it. */
export const DEFAULT_ABORT_GRACE_MS = 5_000

/** Options of {@link runToolCall} and {@link executeTool}. */
export interface RunToolCallOptions {
  /**
   * The cap used when the tool sets no `maxResultChars` of its own. Default
   * {@link DEFAULT_MAX_RESULT_CHARS}.
   */
  maxResultChars?: number
  /**
   * Where over-long outputs are written, one file per call (`<callId>.txt`); the agent passes
   * `<sessionDir>/tool-outputs`. Without it: `<os tmpdir>/keel-tool-outputs/<sessionId>`.
   */
  outputDir?: string
  /**
   * After the abort signal fires, how long to wait for the tool to settle (so a shell tool
   * can report its partial output) before returning `TOOL_ABORTED` without it. Default
   * {@link DEFAULT_ABORT_GRACE_MS}.
   */
  abortGraceMs?: number
}

/** The outcome of one tool call, ready for the `tool/result` event. */
export interface ToolCallOutcome {
  /** What the model gets (already truncated when the output was over the cap). */
  output: ToolOutput
  /** Where the complete output was written when it was over the cap, and its length in UTF-16 units. */
  storedAside?: { path: string; chars: number }
  /** Whether the tool's `call` ran (false for invalid arguments or an already-aborted signal). */
  ran: boolean
}

/** The result of {@link parseToolInput}: the validated input, or the error output the model gets. */
export type ParsedToolInput<Input> = { ok: true; input: Input } | { ok: false; output: ToolOutput }

function errorOutput(code: string, message: string): ToolOutput {
  return { content: [{ type: 'text', text: `Error [${code}]: ${message}` }], isError: true, errorCode: code }
}

function runtimeError(code: ToolRuntimeErrorCode, message: string): ToolOutput {
  return errorOutput(code, message)
}

/** Renders zod issues as lines the model can act on: `- offset: expected number, received string`. */
export function formatZodIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const where =
        issue.path.length === 0
          ? '(arguments)'
          : issue.path
              .map((p) => (typeof p === 'number' ? `[${p}]` : String(p)))
              .join('.')
              .replace(/\.\[/g, '[')
      return `- ${where}: ${issue.message}`
    })
    .join('\n')
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
    const preview = rawArguments.length > 200 ? `${rawArguments.slice(0, 200)}…` : rawArguments
    return {
      ok: false,
      output: runtimeError(
        'TOOL_INPUT_INVALID_JSON',
        `the arguments for ${tool.name} are not valid JSON (${error instanceof Error ? error.message : String(error)}). You sent: ${preview}\nSend one JSON object matching the tool's parameters; the tool was not run.`,
      ),
    }
  }
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

function settle(promise: Promise<unknown>, signal: AbortSignal, graceMs: number): Promise<Settled> {
  return new Promise<Settled>((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined
    const onAbort = () => {
      timer = setTimeout(() => resolve({ kind: 'abandoned' }), graceMs)
      timer.unref?.()
    }
    const done = (s: Settled) => {
      signal.removeEventListener('abort', onAbort)
      if (timer) clearTimeout(timer)
      resolve(s)
    }
    promise.then(
      (value) => done({ kind: 'value', value }),
      (error) => done({ kind: 'error', error }),
    )
    if (signal.aborted) onAbort()
    else signal.addEventListener('abort', onAbort, { once: true })
  })
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
  const message = error instanceof Error ? error.message : String(error)
  return runtimeError('TOOL_FAILED', `${tool.name} failed: ${message}`)
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/** Replaces lone UTF-16 surrogates with U+FFFD so the text survives UTF-8 storage unchanged. */
export function toWellFormed(text: string): string {
  return text.replace(LONE_SURROGATE, '\uFFFD')
}

/** A truncated view of an over-long text: the first `head` and last `tail` characters around a notice. */
export interface TruncatedView {
  view: string
  /** `view` starts with `text.slice(0, head)`. */
  head: number
  /** `view` ends with `text.slice(text.length - tail)`. */
  tail: number
}

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff

/**
 * Cuts `text` to about `maxChars`: head (≈60%) and tail (≈40%) of the budget left after the
 * notice, on line boundaries when one is near, never inside a surrogate pair. The notice
 * names the omitted range, the total size and `location` (where the full text is).
 */
export function truncateText(text: string, maxChars: number, location: string): TruncatedView {
  const notice = (omitted: number) =>
    `\n\n[… ${omitted.toLocaleString('en-US')} of ${text.length.toLocaleString('en-US')} characters omitted. ${location} …]\n\n`
  const budget = Math.max(0, maxChars - notice(text.length).length)
  let head = Math.floor(budget * 0.6)
  let tail = budget - head
  // prefer line boundaries when one is in the second half of the head / first half of the tail
  const nl = text.lastIndexOf('\n', head - 1)
  if (nl >= 0 && nl + 1 >= head / 2) head = nl + 1
  const tailStart = text.length - tail
  const nl2 = text.indexOf('\n', tailStart)
  if (nl2 >= 0 && nl2 + 1 <= text.length - tail / 2) tail = text.length - (nl2 + 1)
  if (head > 0 && isHigh(text.charCodeAt(head - 1))) head -= 1
  if (tail > 0 && isHigh(text.charCodeAt(text.length - tail - 1))) tail -= 1
  if (head + tail >= text.length) return { view: text, head: text.length, tail: 0 }
  const view = text.slice(0, head) + notice(text.length - head - tail) + text.slice(text.length - tail)
  return { view, head, tail }
}

function safeFileName(callId: string): string {
  const base = callId
    .replace(/[^A-Za-z0-9_.-]/g, '_')
    .replace(/^\.+/, '_')
    .slice(0, 100)
  return base === '' ? 'call' : base
}

async function storeAside(dir: string, callId: string, text: string): Promise<string> {
  await mkdir(dir, { recursive: true })
  const base = safeFileName(callId)
  for (let i = 0; ; i++) {
    const path = join(dir, i === 0 ? `${base}.txt` : `${base}-${i}.txt`)
    try {
      await writeFile(path, text, { encoding: 'utf8', flag: 'wx' })
      return path
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST' && i < 1000) continue
      throw error
    }
  }
}

async function applyCap(
  tool: Tool<unknown>,
  output: ToolOutput,
  context: ToolContext,
  options: RunToolCallOptions,
): Promise<Pick<ToolCallOutcome, 'output' | 'storedAside'>> {
  const cap = tool.maxResultChars ?? options.maxResultChars ?? DEFAULT_MAX_RESULT_CHARS
  const texts = output.content.filter((b): b is TextBlock => b.type === 'text')
  const total = texts.reduce((n, b) => n + b.text.length, 0) + Math.max(0, texts.length - 1)
  if (total <= cap) return { output }
  const full = toWellFormed(texts.map((b) => b.text).join('\n'))
  const dir = options.outputDir ?? join(tmpdir(), 'keel-tool-outputs', safeFileName(context.session.id))
  let path: string | undefined
  let location: string
  try {
    path = await storeAside(dir, context.callId, full)
    location = `The full output is saved in ${path}; read it with read_file (offset/limit) or search it with grep`
  } catch (error) {
    location = `The full output could not be saved (${error instanceof Error ? error.message : String(error)}); rerun with a narrower request`
  }
  const { view } = truncateText(full, cap, location)
  const images = output.content.filter((b) => b.type !== 'text')
  const capped: ToolOutput = { ...output, content: [{ type: 'text', text: view }, ...images] }
  return path === undefined
    ? { output: capped }
    : { output: capped, storedAside: { path, chars: full.length } }
}

/**
 * Runs an already-validated input: calls the tool, normalizes a string result, maps a
 * thrown {@link ToolError} (or any `KeelError`) to its code, an abort to `TOOL_ABORTED` and
 * anything else to `TOOL_FAILED`, then applies the result size cap. Never throws for
 * anything the tool does.
 */
export async function executeTool<Input>(
  tool: Tool<Input>,
  input: Input,
  context: ToolContext,
  options: RunToolCallOptions = {},
): Promise<ToolCallOutcome> {
  const t = tool as Tool<unknown>
  if (context.signal.aborted) {
    return {
      output: runtimeError('TOOL_ABORTED', `${t.name} was not run: the turn was aborted.`),
      ran: false,
    }
  }
  const promise = (async () => t.call(input, context))()
  const settled = await settle(promise, context.signal, options.abortGraceMs ?? DEFAULT_ABORT_GRACE_MS)
  let output: ToolOutput
  if (settled.kind === 'value') output = normalize(t, settled.value)
  else if (settled.kind === 'error') output = fromThrown(t, settled.error, context.signal)
  else {
    promise.catch(() => {}) // it may still reject later; nobody is listening any more
    output = runtimeError(
      'TOOL_ABORTED',
      `${t.name} was cancelled and did not stop in time; its result is unknown.`,
    )
  }
  return { ...(await applyCap(t, output, context, options)), ran: true }
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
  if (!parsed.ok)
    return { ...(await applyCap(tool as Tool<unknown>, parsed.output, context, options)), ran: false }
  return executeTool(tool, parsed.input, context, options)
}
