import { errorMessage } from '@keel/base'
import type { ToolSpec } from '@keel/llm'
import { z } from 'zod'
import { ToolRegistryError } from './errors.js'
import type { Tool } from './tool.js'

const cache = new WeakMap<object, ToolSpec>()

/** Removes zod's defaults that only add noise for a model: ±MAX_SAFE_INTEGER bounds on integers. */
function clean(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(clean)
  if (node === null || typeof node !== 'object') return node
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(node)) {
    if (key === 'minimum' && value === Number.MIN_SAFE_INTEGER) continue
    if (key === 'maximum' && value === Number.MAX_SAFE_INTEGER) continue
    out[key] = clean(value)
  }
  return out
}

/**
 * The tool as the model sees it: name, description and the input schema as JSON Schema
 * (draft 2020-12, via zod 4's `z.toJSONSchema` in `input` mode, so fields with defaults are
 * optional). The `$schema` key and zod's implicit ±2^53 integer bounds are dropped: they
 * cost tokens and some OpenAI-compatible endpoints reject `$schema`. The root must be an
 * object schema (`z.object`/`z.strictObject`), as the chat-completions APIs require.
 * Cached per tool object.
 *
 * Throws {@link ToolRegistryError} `TOOL_SCHEMA_NOT_OBJECT` or `TOOL_SCHEMA_UNREPRESENTABLE`.
 */
export function toToolSpec(tool: Tool<unknown>): ToolSpec {
  const cached = cache.get(tool)
  if (cached) return cached
  let json: Record<string, unknown>
  try {
    json = z.toJSONSchema(tool.inputSchema, { io: 'input', target: 'draft-2020-12' }) as Record<
      string,
      unknown
    >
  } catch (error) {
    throw new ToolRegistryError(
      'TOOL_SCHEMA_UNREPRESENTABLE',
      `tool ${tool.name}: its input schema cannot be expressed as JSON Schema (${errorMessage(error)}); use plain JSON types (strings, numbers, booleans, arrays, objects, enums)`,
      { tool: tool.name },
      { cause: error },
    )
  }
  const { $schema: _ignored, ...rest } = json
  if (rest.type !== 'object') {
    throw new ToolRegistryError(
      'TOOL_SCHEMA_NOT_OBJECT',
      `tool ${tool.name}: its input schema must be an object (z.object / z.strictObject), got ${JSON.stringify(rest.type ?? 'no type')}; the model APIs only accept object parameters`,
      { tool: tool.name, type: rest.type },
    )
  }
  const parameters = clean(rest) as Record<string, unknown>
  if (parameters.properties === undefined) parameters.properties = {}
  const spec: ToolSpec = { name: tool.name, description: tool.description, parameters }
  cache.set(tool, spec)
  return spec
}
