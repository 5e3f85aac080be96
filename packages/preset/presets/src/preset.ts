import { boundIssues } from '@keel/base'
import { modelPriceSchema } from '@keel/llm'
import { approvalPolicySchema, sandboxModeSchema } from '@keel/user-approval'
import { z } from 'zod'
import { PresetError } from './errors.js'

/** The tool groups a preset can name. */
export const TOOL_GROUPS = ['fs', 'fs-read', 'shell'] as const

/** A tool group: `fs` (all six file tools), `fs-read` (read_file, list_dir, glob, grep), `shell` (bash). */
export type ToolGroup = (typeof TOOL_GROUPS)[number]

/** One plugin of a preset: which installed plugin (`use`) and the config it gets (plain JSON). */
export const pluginReferenceSchema = z.strictObject({
  use: z.string().min(1),
  config: z.unknown().optional(),
})

/** Runtime schema of a {@link Preset} (what a preset JSON file holds). */
export const presetSchema = z.strictObject({
  /** Lower-case letters, digits, `.`, `_`, `-`; at most 64. */
  id: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]{0,63}$/u, 'use 1–64 of a-z 0-9 . _ - starting with a letter or digit'),
  description: z.string().min(1).max(300),
  plugins: z.array(pluginReferenceSchema).default([]),
  tools: z.array(z.enum(TOOL_GROUPS)).default([]),
  /** The model id; the adapter's default when absent. `--model` wins over it. */
  model: z.string().min(1).optional(),
  /**
   * Context windows per model id, in tokens, over the adapter's capability table: what the
   * agent (and through `ctx.model()` compaction) budgets with. Recorded in the composition.
   */
  contextWindows: z.record(z.string().min(1), z.number().int().positive()).optional(),
  /** The run policy, merged into `@keel/user-approval`'s config (needs that plugin). */
  policy: z
    .strictObject({
      approvalPolicy: approvalPolicySchema.optional(),
      sandboxMode: sandboxModeSchema.optional(),
    })
    .optional(),
  /** Whether a person may be asked (approval prompts). `false`: asks fail closed (CI). Default true. */
  interactive: z.boolean().default(true),
  /** Extra system prompt text appended to the program's own. */
  systemPrompt: z.string().min(1).optional(),
  /**
   * Prices by model id (US dollars per million tokens), over the provider's published ones:
   * what `keel` shows as the session's cost (a negotiated rate, a self-hosted model at 0).
   */
  prices: z.record(z.string().min(1), modelPriceSchema).optional(),
})

/** A preset as written (defaults not yet applied). */
export type PresetInput = z.input<typeof presetSchema>

/** A validated preset: a named list of plugin references with their config, tool groups, model and policy. */
export type Preset = z.output<typeof presetSchema>

/** One plugin reference of a preset. */
export type PluginReference = z.output<typeof pluginReferenceSchema>

/**
 * Defines a preset in code: validates the shape now (a typo fails at import, with the JSON
 * path) and applies defaults. Plugin names and configs are checked against the installed
 * plugins when the preset is resolved.
 */
export function definePreset(input: PresetInput): Preset {
  const parsed = presetSchema.safeParse(input)
  if (!parsed.success) {
    throw shapeError(parsed.error, 'code', typeof input.id === 'string' ? input.id : '?')
  }
  return parsed.data
}

/** A {@link PresetError} `PRESET_INVALID` for the first shape problem of a preset. */
export function shapeError(error: z.ZodError, file: string, id: string): PresetError {
  const issue = boundIssues(error.issues, '$').issues[0]!
  const path = issue.path
  return new PresetError(
    'PRESET_INVALID',
    `preset ${JSON.stringify(id)} in ${file}: ${path}: ${issue.message}`,
    { file, path, preset: id },
  )
}
