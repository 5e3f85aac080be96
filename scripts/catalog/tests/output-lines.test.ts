// The line types of `keel -p` (`@keel/cli`'s src/output-lines.ts) go through the catalog's
// machinery: gen writes their validators, schema and reference, and refuses a line type
// without JSDoc or @example, with an example its validator refuses, or whose `type` is not its key.
import { afterAll, describe, expect, it } from 'vitest'
import type { CatalogError } from '../errors.js'
import { generateCatalog } from '../generate.js'
import { cleanRepos, makeRepo, problemsOf, write } from './helpers.js'

afterAll(cleanRepos)

const LINES = 'packages/cli/cli/src/output-lines.ts'

function cliPackage(root: string, lines: string): void {
  write(root, 'packages/cli/cli/package.json', '{ "name": "@keel/cli", "private": true, "type": "module" }\n')
  write(root, 'packages/cli/cli/src/index.ts', "export type * from './output-lines.js'\n")
  write(root, LINES, lines)
}

const GOOD = `
/** What every line carries. */
export interface LineEnvelope {
  /** @pattern ^[0-9a-f-]{36}$ */
  uuid: string
}

/**
 * The first line.
 * @example {"type":"hello","uuid":"0b9f8a52-4d0e-4a8e-9d43-3c1f1c6f4a10","count":2}
 */
export interface HelloLine extends LineEnvelope {
  type: 'hello'
  /**
   * @integer
   * @minimum 0
   */
  count: number
}

/**
 * A message in.
 * @example {"type":"say","text":"hi"}
 */
export interface SayLine {
  type: 'say'
  text: string
}

export interface OutputLineMap {
  hello: HelloLine
}

export interface InputLineMap {
  say: SayLine
}
`

describe('the line types of keel -p', () => {
  it('generate validators, a JSON Schema and a reference', () => {
    const root = makeRepo('mini')
    cliPackage(root, GOOD)
    const { files } = generateCatalog({ root })
    const validators = files['packages/cli/cli/src/output-lines.generated.ts']!
    expect(validators).toContain('export const outputLineValidators = {')
    expect(validators).toContain('"hello": helloLineSchema as unknown as z.ZodType<OutputLineMap["hello"]>')
    expect(validators).toContain('count: z.number().int().gte(0)')
    const schema = JSON.parse(files['docs/stream-json.schema.json']!) as {
      $ref: string
      $defs: Record<string, { properties?: Record<string, unknown>; oneOf?: unknown[] }>
    }
    expect(schema.$ref).toBe('#/$defs/OutputLine')
    expect(schema.$defs.OutputLine!.oneOf).toEqual([{ $ref: '#/$defs/HelloLine' }])
    expect(schema.$defs.InputLine!.oneOf).toEqual([{ $ref: '#/$defs/SayLine' }])
    expect(schema.$defs.HelloLine!.properties!.uuid).toEqual({ type: 'string', pattern: '^[0-9a-f-]{36}$' })
    const doc = files['docs/stream-json.md']!
    expect(doc).toContain('### HelloLine')
    expect(doc).toContain('export interface LineEnvelope {')
  })

  it('a workspace without the module generates none of it', () => {
    const { files } = generateCatalog({ root: makeRepo('mini') })
    expect(Object.keys(files).filter((f) => f.includes('stream-json') || f.includes('output-lines'))).toEqual(
      [],
    )
  })

  it('refuses a line type without an example, with a bad one, or whose type is not its key', () => {
    const root = makeRepo('mini')
    cliPackage(
      root,
      GOOD.replace(
        ' * @example {"type":"hello","uuid":"0b9f8a52-4d0e-4a8e-9d43-3c1f1c6f4a10","count":2}\n',
        '',
      )
        .replace('{"type":"say","text":"hi"}', '{"type":"say","text":3}')
        .replace('  say: SayLine', '  speak: SayLine'),
    )
    const problems = problemsOf(root)
    expect(problems).toMatch(new RegExp(`^${LINES}:\\d+: HelloLine has no @example$`, 'mu'))
    expect(problems).toMatch(/SayLine\.type must be the literal 'speak' \(its key in InputLineMap\)/u)
    expect(problems).toMatch(/the @example of SayLine fails its own validator: text: /u)
    try {
      generateCatalog({ root })
    } catch (e) {
      expect((e as CatalogError).problems.every((p) => p.code === 'OUTPUT_LINE_INVALID')).toBe(true)
    }
  })
})
