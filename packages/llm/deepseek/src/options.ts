import { boundIssues, KeelError } from '@keel/base'
import { z } from 'zod'
import { type ModelCapabilities, modelCapabilitiesSchema } from './capabilities.js'

/** Default endpoint; `DEEPSEEK_BASE_URL` or the `baseURL` option points elsewhere. */
export const DEFAULT_BASE_URL = 'https://api.deepseek.com'
/** Default model id. */
export const DEFAULT_MODEL = 'deepseek-v4-flash'
/** Default time to wait for response headers, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 120_000
/**
 * Default per-stream idle timeout, in milliseconds (5 minutes): a stream that sends no byte
 * (data or keep-alive comment) for this long is ended as a retryable `stream-idle` failure.
 */
export const DEFAULT_IDLE_TIMEOUT_MS = 300_000
/** API key sent to a loopback server when none is configured (local servers do not check it). */
export const LOCAL_PLACEHOLDER_KEY = 'keel-local-no-key'

/** How a message image is handled; DeepSeek chat models read text only. */
export type ImagePolicy = 'placeholder' | 'reject'

/** Options of {@link DeepSeekAdapter}. All optional. */
export interface DeepSeekOptions {
  /** Endpoint root; defaults to `DEEPSEEK_BASE_URL`, then `https://api.deepseek.com`. */
  baseURL?: string
  /**
   * Defaults to `DEEPSEEK_API_KEY`. Required unless `baseURL` points at a loopback host
   * (127.0.0.0/8, localhost, ::1), where a placeholder key is sent instead.
   */
  apiKey?: string
  /** Default model id (any id accepted); `deepseek-v4-flash` when absent. */
  model?: string
  /** Recorded as {@link StreamRecord.provider}; defaults to `deepseek`. */
  provider?: string
  /** How long to wait for the response headers, in milliseconds (the openai client's `timeout`). */
  timeoutMs?: number
  /**
   * How long a response stream may stay silent, in milliseconds, before the attempt ends as
   * a retryable `stream-idle` failure (every byte counts, `: keep-alive` comments too).
   * Default {@link DEFAULT_IDLE_TIMEOUT_MS} (5 minutes).
   */
  idleTimeoutMs?: number
  /** Per-model overrides of the capability table, field by field. */
  capabilities?: Record<string, Partial<Omit<ModelCapabilities, 'assumed'>>>
  /**
   * `placeholder` (default): an image block is sent as a one-line text note saying an image
   * was omitted. `reject`: a request holding an image fails with `invalid-request`.
   */
  images?: ImagePolicy
  /** Extra HTTP headers on every request. */
  headers?: Record<string, string>
  /** Extra request body fields (e.g. `thinking`, `reasoning_effort`); never override the core ones. */
  extraBody?: Record<string, unknown>
  /** Where to read `DEEPSEEK_API_KEY` and `DEEPSEEK_BASE_URL`; defaults to `process.env`. */
  env?: Record<string, string | undefined>
}

/** Runtime schema of {@link DeepSeekOptions}. */
export const deepSeekOptionsSchema = z.strictObject({
  baseURL: z.url({ protocol: /^https?$/ }).optional(),
  apiKey: z.string().min(1).optional(),
  model: z.string().min(1).optional(),
  provider: z.string().min(1).optional(),
  timeoutMs: z.number().int().positive().optional(),
  idleTimeoutMs: z.number().int().positive().optional(),
  capabilities: z.record(z.string(), modelCapabilitiesSchema.partial()).optional(),
  images: z.enum(['placeholder', 'reject']).optional(),
  headers: z.record(z.string(), z.string()).optional(),
  extraBody: z.record(z.string(), z.unknown()).optional(),
  env: z.record(z.string(), z.string().optional()).optional(),
})

/** Codes of {@link DeepSeekConfigError}. */
export type DeepSeekConfigErrorCode = 'DEEPSEEK_MISSING_API_KEY' | 'DEEPSEEK_INVALID_OPTIONS'

/** The adapter cannot be built from its options (bad option, missing key). Thrown by the constructor. */
export class DeepSeekConfigError extends KeelError<DeepSeekConfigErrorCode> {}

/** The options with defaults and environment applied. */
export interface ResolvedOptions {
  baseURL: string
  apiKey: string
  model: string
  provider: string
  timeoutMs: number
  idleTimeoutMs: number
  capabilities: Record<string, Partial<Omit<ModelCapabilities, 'assumed'>>>
  images: ImagePolicy
  headers: Record<string, string>
  extraBody: Record<string, unknown>
}

/** True when `url` names this machine: 127.0.0.0/8, localhost or ::1. */
export function isLoopback(url: string): boolean {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '')
  return host === 'localhost' || host === '::1' || /^127(?:\.\d{1,3}){3}$/.test(host)
}

/** Validates options and applies defaults and the environment; throws {@link DeepSeekConfigError}. */
export function resolveOptions(options: DeepSeekOptions): ResolvedOptions {
  const parsed = deepSeekOptionsSchema.safeParse(options)
  if (!parsed.success) {
    const { issues, more } = boundIssues(parsed.error.issues)
    const list = issues.map((issue) => `${issue.path || '(options)'}: ${issue.message}`)
    if (more > 0) list.push(`… and ${more} more`)
    throw new DeepSeekConfigError(
      'DEEPSEEK_INVALID_OPTIONS',
      `Invalid DeepSeek adapter options: ${list.join('; ')}`,
      {
        issues,
      },
    )
  }
  const env = options.env ?? process.env
  const envBase = env.DEEPSEEK_BASE_URL?.trim()
  const baseURL = options.baseURL ?? (envBase ? envBase : DEFAULT_BASE_URL)
  if (!z.url({ protocol: /^https?$/ }).safeParse(baseURL).success) {
    throw new DeepSeekConfigError(
      'DEEPSEEK_INVALID_OPTIONS',
      `DEEPSEEK_BASE_URL is not an http(s) URL: ${JSON.stringify(baseURL)}. Fix or unset it.`,
      { baseURL },
    )
  }
  const envKey = env.DEEPSEEK_API_KEY?.trim()
  let apiKey = options.apiKey ?? (envKey ? envKey : undefined)
  if (apiKey === undefined) {
    if (!isLoopback(baseURL)) {
      throw new DeepSeekConfigError(
        'DEEPSEEK_MISSING_API_KEY',
        `No API key for ${baseURL}: set DEEPSEEK_API_KEY or pass the apiKey option ` +
          '(a key is optional only for a server on 127.0.0.1 / localhost).',
        { baseURL },
      )
    }
    apiKey = LOCAL_PLACEHOLDER_KEY
  }
  return {
    baseURL,
    apiKey,
    model: options.model ?? DEFAULT_MODEL,
    provider: options.provider ?? 'deepseek',
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    idleTimeoutMs: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    capabilities: options.capabilities ?? {},
    images: options.images ?? 'placeholder',
    headers: options.headers ?? {},
    extraBody: options.extraBody ?? {},
  }
}
