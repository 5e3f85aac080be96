import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool, type Tool, ToolRegistry, ToolRegistryError, toToolSpec } from '../src/index.js'

function tool(name: string, schema: z.ZodType<unknown> = z.strictObject({})): Tool<unknown> {
  return defineTool<unknown>({
    name,
    description: `the ${name} tool`,
    inputSchema: schema,
    annotations: { readOnly: true, destructive: false, openWorld: false, idempotent: true },
    call: async () => 'ok',
  })
}

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn()
  } catch (error) {
    return error instanceof ToolRegistryError ? error.code : `not a ToolRegistryError: ${String(error)}`
  }
  return undefined
}

describe('ToolRegistry', () => {
  it('keeps tools by unique name in registration order', () => {
    const registry = new ToolRegistry([tool('b'), tool('a')])
    expect(registry.names()).toEqual(['b', 'a'])
    expect(registry.get('a')?.name).toBe('a')
    expect(registry.has('zzz')).toBe(false)
    expect(registry.size).toBe(2)
  })

  it('refuses duplicate names and leaves the first registration in place', () => {
    const registry = new ToolRegistry()
    const first = tool('read_file')
    registry.register(first)
    expect(codeOf(() => registry.register(tool('read_file')))).toBe('TOOL_NAME_DUPLICATE')
    expect(registry.get('read_file')).toBe(first)
  })

  it('checks the name format', () => {
    const registry = new ToolRegistry()
    for (const bad of ['', 'has space', 'dot.name', 'x'.repeat(65), 'ümlaut']) {
      expect(codeOf(() => registry.register(tool(bad)))).toBe('TOOL_NAME_INVALID')
    }
    expect(codeOf(() => registry.register(tool('ok_Name-1')))).toBeUndefined()
    expect(codeOf(() => registry.register(tool('y'.repeat(64))))).toBeUndefined()
  })

  it('refuses malformed definitions', () => {
    const registry = new ToolRegistry()
    const noDescription = { ...tool('t'), description: ' ' }
    expect(codeOf(() => registry.register(noDescription))).toBe('TOOL_DEFINITION_INVALID')
    const badAnnotations = {
      ...tool('t'),
      annotations: { readOnly: true, destructive: true, openWorld: false, idempotent: true },
    }
    expect(codeOf(() => registry.register(badAnnotations))).toBe('TOOL_DEFINITION_INVALID')
    const badCap = { ...tool('t'), maxResultChars: 0 }
    expect(codeOf(() => registry.register(badCap))).toBe('TOOL_DEFINITION_INVALID')
    for (const timeoutMs of [0, -1, Number.NaN, '5' as unknown as number]) {
      expect(codeOf(() => registry.register({ ...tool('t'), timeoutMs }))).toBe('TOOL_DEFINITION_INVALID')
    }
    expect(registry.size).toBe(0)
    registry.register({ ...tool('ok'), timeoutMs: () => 10 })
  })

  it('refuses schemas that are not objects or cannot be JSON Schema', () => {
    const registry = new ToolRegistry()
    expect(codeOf(() => registry.register(tool('s', z.string())))).toBe('TOOL_SCHEMA_NOT_OBJECT')
    expect(codeOf(() => registry.register(tool('d', z.strictObject({ when: z.date() }))))).toBe(
      'TOOL_SCHEMA_UNREPRESENTABLE',
    )
    expect(registry.size).toBe(0)
  })

  it('require() names the available tools; the disposer removes exactly its registration', () => {
    const registry = new ToolRegistry([tool('a')])
    expect(codeOf(() => registry.require('nope'))).toBe('TOOL_NOT_FOUND')
    const dispose = registry.register(tool('b'))
    dispose()
    expect(registry.has('b')).toBe(false)
    const again = tool('b')
    registry.register(again)
    dispose() // stale disposer: must not remove the new registration
    expect(registry.get('b')).toBe(again)
  })
})

describe('toToolSpec', () => {
  it('emits an object JSON Schema without $schema or integer noise, defaults optional', () => {
    const schema = z.strictObject({
      path: z.string().describe('the path'),
      offset: z.number().int().min(1).optional().describe('first line'),
      limit: z.number().int().default(10),
      mode: z.enum(['a', 'b']).optional(),
    })
    const spec = toToolSpec(tool('read', schema))
    expect(spec.name).toBe('read')
    expect(spec.description).toBe('the read tool')
    expect(spec.parameters).toEqual({
      type: 'object',
      properties: {
        path: { type: 'string', description: 'the path' },
        offset: { type: 'integer', minimum: 1, description: 'first line' },
        limit: { type: 'integer', default: 10 },
        mode: { type: 'string', enum: ['a', 'b'] },
      },
      required: ['path'],
      additionalProperties: false,
    })
    expect(JSON.stringify(spec.parameters)).not.toContain('$schema')
  })

  it('gives an empty properties object for a tool without parameters', () => {
    expect(toToolSpec(tool('noargs', z.object({}))).parameters).toMatchObject({
      type: 'object',
      properties: {},
    })
  })

  it('registry.specs() lists every tool', () => {
    expect(new ToolRegistry([tool('a'), tool('b')]).specs().map((s) => s.name)).toEqual(['a', 'b'])
  })
})
