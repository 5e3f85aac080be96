import type { ToolSpec } from '@keel/llm'
import { ToolRegistryError } from './errors.js'
import { toToolSpec } from './spec.js'
import type { Tool } from './tool.js'

/** The name rule shared by OpenAI-compatible APIs: 1–64 of `a-z A-Z 0-9 _ -`. */
export const TOOL_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/

/** Throws {@link ToolRegistryError} `TOOL_NAME_INVALID` unless `name` matches {@link TOOL_NAME_PATTERN}. */
export function assertToolName(name: unknown): asserts name is string {
  if (typeof name !== 'string' || !TOOL_NAME_PATTERN.test(name)) {
    throw new ToolRegistryError(
      'TOOL_NAME_INVALID',
      `tool name ${JSON.stringify(name)} is invalid: use 1–64 characters of a-z A-Z 0-9 _ - (the model APIs reject anything else)`,
      { tool: name },
    )
  }
}

function assertDefinition(tool: Tool<unknown>): void {
  assertToolName(tool.name)
  const problems: string[] = []
  if (typeof tool.description !== 'string' || tool.description.trim() === '')
    problems.push('a non-empty description')
  if (typeof tool.call !== 'function') problems.push('a call function')
  if (
    tool.inputSchema === null ||
    typeof tool.inputSchema !== 'object' ||
    typeof tool.inputSchema.safeParse !== 'function'
  )
    problems.push('a zod inputSchema')
  const a = tool.annotations as unknown as Record<string, unknown> | undefined
  for (const key of ['readOnly', 'destructive', 'openWorld', 'idempotent']) {
    if (typeof a?.[key] !== 'boolean') problems.push(`annotations.${key} (boolean)`)
  }
  if (a?.readOnly === true && a.destructive === true)
    problems.push('annotations that are not both readOnly and destructive')
  if (
    tool.maxResultChars !== undefined &&
    !(Number.isInteger(tool.maxResultChars) && tool.maxResultChars > 0)
  )
    problems.push('a positive integer maxResultChars (or none)')
  const timeout = tool.timeoutMs as unknown
  if (
    timeout !== undefined &&
    typeof timeout !== 'function' &&
    !(typeof timeout === 'number' && Number.isFinite(timeout) && timeout > 0)
  )
    problems.push('a positive timeoutMs (a number or a function of the input, or none)')
  if (problems.length > 0) {
    throw new ToolRegistryError('TOOL_DEFINITION_INVALID', `tool ${tool.name} needs ${problems.join(', ')}`, {
      tool: tool.name,
      problems,
    })
  }
}

/**
 * The tools of one agent, by unique name, in registration order. Registering checks the
 * definition (name format, description, annotations, and that the input schema converts
 * to an object JSON Schema) so a bad tool fails at startup, not on the model's first call.
 */
export class ToolRegistry {
  readonly #tools = new Map<string, Tool<unknown>>()

  constructor(tools: Iterable<Tool<unknown>> = []) {
    for (const tool of tools) this.register(tool)
  }

  /**
   * Adds a tool. Throws {@link ToolRegistryError} (`TOOL_NAME_INVALID`,
   * `TOOL_NAME_DUPLICATE`, `TOOL_DEFINITION_INVALID`, `TOOL_SCHEMA_NOT_OBJECT`,
   * `TOOL_SCHEMA_UNREPRESENTABLE`) and then registers nothing. Returns a disposer that
   * removes exactly this registration (a no-op if it was already removed).
   */
  register<Input>(tool: Tool<Input>): () => void {
    const t = tool as Tool<unknown>
    assertDefinition(t)
    if (this.#tools.has(t.name)) {
      throw new ToolRegistryError(
        'TOOL_NAME_DUPLICATE',
        `a tool named ${t.name} is already registered: tool names must be unique within an agent (rename one of them)`,
        { tool: t.name },
      )
    }
    toToolSpec(t) // fail now if the schema cannot be sent to the model
    this.#tools.set(t.name, t)
    return () => {
      if (this.#tools.get(t.name) === t) this.#tools.delete(t.name)
    }
  }

  /** The tool of that name, or `undefined`. */
  get(name: string): Tool<unknown> | undefined {
    return this.#tools.get(name)
  }

  /** The tool of that name; throws {@link ToolRegistryError} `TOOL_NOT_FOUND` listing the known names. */
  require(name: string): Tool<unknown> {
    const tool = this.#tools.get(name)
    if (!tool) {
      throw new ToolRegistryError(
        'TOOL_NOT_FOUND',
        `no tool named ${JSON.stringify(name)}; available tools: ${[...this.#tools.keys()].join(', ') || '(none)'}`,
        { tool: name, available: [...this.#tools.keys()] },
      )
    }
    return tool
  }

  has(name: string): boolean {
    return this.#tools.has(name)
  }

  /** Names in registration order. */
  names(): string[] {
    return [...this.#tools.keys()]
  }

  /** Tools in registration order. */
  list(): Tool<unknown>[] {
    return [...this.#tools.values()]
  }

  get size(): number {
    return this.#tools.size
  }

  /** The specs sent to the model, in registration order. */
  specs(): ToolSpec[] {
    return this.list().map(toToolSpec)
  }
}
