import type { ModelCapabilities } from '@keel/llm'
import { z } from 'zod'

export type { ModelCapabilities }

/** Runtime schema of {@link ModelCapabilities}. */
export const modelCapabilitiesSchema = z.strictObject({
  contextWindow: z.number().int().positive(),
  maxOutputTokens: z.number().int().positive(),
  reasoning: z.boolean(),
  reasoningEfforts: z.array(z.string().min(1)).optional(),
})

/**
 * Known DeepSeek models. V4 figures (1,048,576-token window, 384K output, thinking and
 * non-thinking modes, `reasoning_effort` low / high / max) are as reported by providers
 * serving them; the older aliases keep their documented 128K window. Override per id with the `capabilities` option.
 */
export const knownModelCapabilities: Readonly<Record<string, ModelCapabilities>> = Object.freeze({
  'deepseek-v4-flash': {
    contextWindow: 1_048_576,
    maxOutputTokens: 384_000,
    reasoning: true,
    reasoningEfforts: ['low', 'high', 'max'],
  },
  'deepseek-v4-pro': {
    contextWindow: 1_048_576,
    maxOutputTokens: 384_000,
    reasoning: true,
    reasoningEfforts: ['low', 'high', 'max'],
  },
  'deepseek-chat': { contextWindow: 128_000, maxOutputTokens: 8_192, reasoning: false },
  'deepseek-reasoner': { contextWindow: 128_000, maxOutputTokens: 65_536, reasoning: true },
})

/** What an unknown model id is assumed to support: a conservative 128K window without reasoning. */
export const defaultModelCapabilities: ModelCapabilities = Object.freeze({
  contextWindow: 128_000,
  maxOutputTokens: 8_192,
  reasoning: false,
})

/**
 * The capabilities of `model`: the known table, then the default, each overridden field by
 * field. A model in neither the table nor the overrides gets the default marked `assumed`.
 */
export function resolveCapabilities(
  model: string,
  overrides: Readonly<Record<string, Partial<ModelCapabilities>>> = {},
): ModelCapabilities {
  const known = knownModelCapabilities[model]
  const override = overrides[model]
  if (known === undefined && override === undefined) return { ...defaultModelCapabilities, assumed: true }
  return { ...(known ?? defaultModelCapabilities), ...override }
}
