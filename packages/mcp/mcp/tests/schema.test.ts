import { parseToolInput, toToolSpec } from '@keel/tools'
import { beforeAll, describe, expect, it } from 'vitest'
import { toToolOutput } from '../src/content.js'
import { loadSdk, type Sdk } from '../src/sdk.js'

let sdk: Sdk
beforeAll(async () => {
  sdk = await loadSdk()
})

import { jsonSchemaInput, qualifiedToolName, toKeelAnnotations } from '../src/index.js'

const schema = {
  type: 'object',
  properties: {
    path: { type: 'string', minLength: 1, description: 'where' },
    mode: { enum: ['fast', 'slow'] },
    items: { type: 'array', items: { type: 'integer' } },
    when: { type: 'string', format: 'date-time' },
  },
  required: ['path'],
  additionalProperties: false,
}

function tool(inputSchema: unknown) {
  return {
    name: 'mcp__s__t',
    description: 'd',
    inputSchema: jsonSchemaInput(sdk, inputSchema, 'test'),
    annotations: toKeelAnnotations(undefined, false),
    call: async () => 'x',
  }
}

describe('a server JSON Schema as the tool input schema', () => {
  it('is sent to the model as the server wrote it', () => {
    const spec = toToolSpec(tool({ $schema: 'https://json-schema.org/draft/2020-12/schema', ...schema }))
    expect(spec.parameters).toMatchObject(schema)
    expect(spec.parameters).not.toHaveProperty('$schema')
  })

  it('validates what the model sends, each violation at its path, before the server sees it', () => {
    const t = tool(schema)
    expect(
      parseToolInput(t, '{"path":"a","mode":"fast","items":[1,2],"when":"2026-01-05T08:00:00Z"}'),
    ).toMatchObject({
      ok: true,
      input: { path: 'a' },
    })
    const bad = parseToolInput(t, '{"mode":"medium","items":[1,"x"],"extra":1,"when":"yesterday"}')
    expect(bad.ok).toBe(false)
    const text = bad.ok ? '' : (bad.output.content[0] as { text: string }).text
    expect(text).toContain('TOOL_INPUT_INVALID')
    expect(text).toContain('- path: required')
    expect(text).toContain('- mode: must be one of ["fast","slow"]')
    expect(text).toContain('- items[1]: must be integer')
    expect(text).toContain('- extra: not allowed (unknown property)')
    expect(text).toContain('- when: must match format "date-time"')
    expect(parseToolInput(t, '[1]').ok).toBe(false)
  })

  it('reads draft-07 schemas, and one without a type as an object schema', () => {
    const t = tool({
      $schema: 'http://json-schema.org/draft-07/schema#',
      properties: { n: { type: 'number' } },
      required: ['n'],
    })
    expect(parseToolInput(t, '{"n":1}').ok).toBe(true)
    expect(parseToolInput(t, '{}').ok).toBe(false)
    expect(toToolSpec(t).parameters.type).toBe('object')
  })

  it('refuses schemas it cannot use: not an object, too large, not compilable', () => {
    expect(() => jsonSchemaInput(sdk, { type: 'string' }, 'w')).toThrow(
      expect.objectContaining({ code: 'MCP_SCHEMA_INVALID' }),
    )
    expect(() => jsonSchemaInput(sdk, 'nope', 'w')).toThrow(
      expect.objectContaining({ code: 'MCP_SCHEMA_INVALID' }),
    )
    const huge = {
      type: 'object',
      properties: Object.fromEntries(
        Array.from({ length: 5000 }, (_, i) => [`p${i}`, { type: 'string', description: 'x'.repeat(20) }]),
      ),
    }
    expect(() => jsonSchemaInput(sdk, huge, 'w')).toThrow(/over the 100000/u)
    expect(() =>
      jsonSchemaInput(sdk, { type: 'object', properties: { a: { $ref: '#/nowhere' } } }, 'w'),
    ).toThrow(expect.objectContaining({ code: 'MCP_SCHEMA_INVALID' }))
  })
})

describe('annotations: absent hints are the fail-closed defaults', () => {
  it.each([
    ['none', undefined, false, { readOnly: false, destructive: true, idempotent: false, openWorld: true }],
    [
      'read-only, closed world',
      { readOnlyHint: true, openWorldHint: false },
      false,
      { readOnly: true, destructive: false, idempotent: true, openWorld: false },
    ],
    [
      'read-only with a stray destructive hint',
      { readOnlyHint: true, destructiveHint: true },
      false,
      { readOnly: true, destructive: false, idempotent: true, openWorld: true },
    ],
    [
      'additive and idempotent',
      { destructiveHint: false, idempotentHint: true, openWorldHint: false },
      false,
      { readOnly: false, destructive: false, idempotent: true, openWorld: false },
    ],
    [
      'a remote server claiming a closed world',
      { readOnlyHint: true, openWorldHint: false },
      true,
      { readOnly: true, destructive: false, idempotent: true, openWorld: true },
    ],
  ])('%s', (_name, hints, remote, expected) => {
    expect(toKeelAnnotations(hints, remote)).toEqual(expected)
  })
})

describe('tool names', () => {
  it('mcp__<server>__<tool>, other characters as _, long or clashing names cut with a stable hash', () => {
    expect(qualifiedToolName('github', 'search_issues', new Set())).toBe('mcp__github__search_issues')
    expect(qualifiedToolName('fs', 'read.file/v2', new Set())).toBe('mcp__fs__read_file_v2')
    const long = qualifiedToolName('server', 'x'.repeat(80), new Set())
    expect(long).toHaveLength(64)
    expect(long).toBe(qualifiedToolName('server', 'x'.repeat(80), new Set()))
    const clash = qualifiedToolName('fs', 'read_file', new Set(['mcp__fs__read_file']))
    expect(clash).not.toBe('mcp__fs__read_file')
    expect(clash).toMatch(/^[A-Za-z0-9_-]{1,64}$/u)
  })
})

describe('results as content blocks', () => {
  it('text, images, embedded resources, links, audio; structured content when there is no content; isError coded', () => {
    const png = 'iVBORw0KGgo='
    const out = toToolOutput(
      {
        content: [
          { type: 'text', text: 'hello' },
          { type: 'image', data: png, mimeType: 'image/png' },
          { type: 'image', data: png, mimeType: 'image/tiff' },
          { type: 'resource', resource: { uri: 'file:///a.txt', mimeType: 'text/plain', text: 'A' } },
          { type: 'resource', resource: { uri: 'file:///b.png', mimeType: 'image/png', blob: png } },
          { type: 'resource', resource: { uri: 'file:///c.bin', blob: 'AAAA' } },
          { type: 'resource_link', uri: 'file:///d', name: 'd', description: 'the d' },
          { type: 'audio', data: 'AAAA', mimeType: 'audio/wav' },
          { type: 'hologram' },
        ],
      },
      'mcp__s__t',
    )
    expect(out.isError).toBeUndefined()
    expect(out.content).toEqual([
      { type: 'text', text: 'hello' },
      { type: 'image', mediaType: 'image/png', data: png },
      { type: 'text', text: '[image (image/tiff) in a format the model cannot be shown]' },
      { type: 'text', text: '[resource file:///a.txt (text/plain)]\nA' },
      { type: 'text', text: '[resource file:///b.png (image/png)]' },
      { type: 'image', mediaType: 'image/png', data: png },
      { type: 'text', text: '[resource file:///c.bin] binary content, about 3 bytes, not shown' },
      { type: 'text', text: '[resource link file:///d "d": the d]' },
      { type: 'text', text: '[audio (audio/wav), about 3 bytes, not shown]' },
      { type: 'text', text: '[content of type "hologram" not shown]' },
    ])
    expect(toToolOutput({ content: [], structuredContent: { n: 1 } }, 't').content).toEqual([
      { type: 'text', text: '{\n  "n": 1\n}' },
    ])
    const failed = toToolOutput({ content: [{ type: 'text', text: 'broken' }], isError: true }, 'mcp__s__t')
    expect(failed).toMatchObject({ isError: true, errorCode: 'MCP_TOOL_ERROR' })
    expect(failed.content[1]).toEqual({ type: 'text', text: 'broken' })
  })
})
