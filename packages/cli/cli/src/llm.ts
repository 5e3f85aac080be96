import { errorMessage } from '@keel/base'
import type { LlmAdapter } from '@keel/llm'
import { UsageError } from './usage.js'

/** What the command line says about the model endpoint. */
export interface LlmFlags {
  baseUrl?: string | undefined
  model?: string | undefined
  /** `--idle-timeout` as typed (`30s`, `2m`, `500ms`; a bare number is seconds). */
  idleTimeout?: string | undefined
}

/**
 * A duration as typed on the command line: `500ms`, `30s`, `2m`, or a bare number of
 * seconds. Returns milliseconds; refuses anything else, zero and absurd values (over a day).
 */
export function parseDuration(text: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)?$/u.exec(text.trim())
  const unit = match?.[2] ?? 's'
  const ms = match ? Number(match[1]) * (unit === 'ms' ? 1 : unit === 's' ? 1000 : 60_000) : Number.NaN
  if (!Number.isFinite(ms) || ms < 1 || ms > 86_400_000) {
    throw new UsageError(`${flag} must be a duration such as 30s, 2m or 500ms, got ${JSON.stringify(text)}`)
  }
  return Math.round(ms)
}

function idleTimeoutMs(
  flags: LlmFlags,
  env: Readonly<Record<string, string | undefined>>,
): number | undefined {
  if (flags.idleTimeout !== undefined) return parseDuration(flags.idleTimeout, '--idle-timeout')
  const raw = env.KEEL_IDLE_TIMEOUT_MS?.trim()
  if (raw === undefined || raw === '') return undefined
  if (!/^\d+$/u.test(raw) || Number(raw) < 1) {
    throw new UsageError(
      `KEEL_IDLE_TIMEOUT_MS must be a positive number of milliseconds, got ${JSON.stringify(raw)}`,
    )
  }
  return Number(raw)
}

function checkUrl(url: string, from: string): void {
  let parsed: URL | undefined
  try {
    parsed = new URL(url)
  } catch {
    parsed = undefined
  }
  if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new UsageError(
      `${from} must be an http(s) URL such as http://127.0.0.1:8080/v1, got ${JSON.stringify(url)}`,
    )
  }
}

/**
 * The model adapter for `keel`: DeepSeek through the official `openai` client, or any
 * OpenAI-compatible endpoint with `--base-url` (or `DEEPSEEK_BASE_URL`). Without a key and
 * without a base URL it refuses before any network access, naming what to set. A stream
 * silent for the idle timeout (`--idle-timeout`, `KEEL_IDLE_TIMEOUT_MS`; default 5 min)
 * ends the attempt, which is retried.
 */
export async function selectLlm(
  flags: LlmFlags,
  env: Readonly<Record<string, string | undefined>>,
): Promise<LlmAdapter> {
  if (flags.model !== undefined && flags.model.trim() === '')
    throw new UsageError('--model needs a model id, got an empty one')
  const fromEnv = env.DEEPSEEK_BASE_URL?.trim() || undefined
  const baseURL = flags.baseUrl ?? fromEnv
  if (baseURL !== undefined)
    checkUrl(baseURL, flags.baseUrl !== undefined ? '--base-url' : 'DEEPSEEK_BASE_URL')
  const idle = idleTimeoutMs(flags, env)
  const key = env.DEEPSEEK_API_KEY?.trim()
  if (baseURL === undefined && !key) {
    throw new UsageError(
      'no API key: set DEEPSEEK_API_KEY to your DeepSeek key (https://platform.deepseek.com/api_keys), ' +
        'or pass --base-url <url> for another OpenAI-compatible endpoint (a loopback one needs no key).',
      { showUsage: false },
    )
  }
  // Imported once the flags passed: a refused command line never loads the client.
  const { createDeepSeekAdapter } = await import('@keel/deepseek')
  try {
    return createDeepSeekAdapter({
      env: { ...env },
      ...(baseURL === undefined ? {} : { baseURL }),
      ...(flags.model === undefined ? {} : { model: flags.model }),
      ...(idle === undefined ? {} : { idleTimeoutMs: idle }),
    })
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code === 'DEEPSEEK_MISSING_API_KEY') {
      throw new UsageError(
        `no API key for ${baseURL}: set DEEPSEEK_API_KEY (only a server on 127.0.0.1 or localhost needs none)`,
        { showUsage: false },
      )
    }
    if (code === 'DEEPSEEK_INVALID_OPTIONS') throw new UsageError(errorMessage(error))
    throw error
  }
}
