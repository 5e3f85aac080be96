import { createDeepSeekAdapter } from '@keel/deepseek'
import type { LlmAdapter } from '@keel/llm'

/** A command line the user must change (exit code 2). */
export class UsageError extends Error {
  override readonly name = 'UsageError'
  /** Whether the usage text helps (not for a missing key: one message says it all). */
  readonly showUsage: boolean

  constructor(message: string, options: { showUsage?: boolean } = {}) {
    super(message)
    this.showUsage = options.showUsage ?? true
  }
}

/**
 * The model adapter for `keel`: DeepSeek through the official `openai` client, or any
 * OpenAI-compatible endpoint with `--base-url` (or `DEEPSEEK_BASE_URL`). Without a key and
 * without a base URL it refuses before any network access, naming what to set.
 */
export function selectLlm(
  flags: { baseUrl?: string | undefined; model?: string | undefined },
  env: Readonly<Record<string, string | undefined>>,
): LlmAdapter {
  const baseURL = flags.baseUrl ?? (env.DEEPSEEK_BASE_URL || undefined)
  const key = env.DEEPSEEK_API_KEY?.trim()
  if (baseURL === undefined && !key) {
    throw new UsageError(
      'no API key: set DEEPSEEK_API_KEY to your DeepSeek key (https://platform.deepseek.com/api_keys), ' +
        'or pass --base-url <url> for another OpenAI-compatible endpoint (a loopback one needs no key).',
      { showUsage: false },
    )
  }
  try {
    return createDeepSeekAdapter({
      env: { ...env },
      ...(baseURL === undefined ? {} : { baseURL }),
      ...(flags.model === undefined ? {} : { model: flags.model }),
    })
  } catch (error) {
    const code = (error as { code?: string }).code
    if (code === 'DEEPSEEK_MISSING_API_KEY' || code === 'DEEPSEEK_INVALID_OPTIONS') {
      throw new UsageError((error as Error).message)
    }
    throw error
  }
}
