// A server's JSON Schema as a Keel tool's input schema. Keel tools carry zod schemas (sent
// to the model as JSON Schema, used to validate what the model sends); an MCP tool brings
// a JSON Schema of its own. This wraps it: a zod object whose JSON Schema form is the
// server's schema and whose validation is the schema itself, compiled with Ajv (draft
// 2020-12 unless the schema names an older draft). Schemas are hostile input: bounded in
// size, compiled in an instance of their own that remembers nothing, never logged to the console.
import { errorMessage } from '@keel/base'
import type { Ajv as AjvCore, ErrorObject, ValidateFunction } from 'ajv'
import { z } from 'zod'
import { McpClientError } from './errors.js'
import type { Sdk } from './sdk.js'

/** Largest input schema accepted, in characters of its JSON. */
export const MAX_SCHEMA_CHARS = 100_000

/** Issues reported per invalid input (the rest are counted). */
const MAX_ISSUES = 10

function ajvFor(sdk: Sdk, schema: Record<string, unknown>): AjvCore {
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : ''
  const options = {
    strict: false,
    allErrors: true,
    validateSchema: false,
    addUsedSchema: false,
    logger: false as const,
  }
  const ajv = /draft-0[4-7]/u.test(dialect) ? new sdk.Ajv(options) : new sdk.Ajv2020(options)
  sdk.addFormats(ajv)
  return ajv
}

/**
 * Compiles a JSON Schema. Throws {@link McpClientError} `MCP_SCHEMA_INVALID` when it is
 * too large or does not compile.
 */
export function compileSchema(sdk: Sdk, schema: Record<string, unknown>, where: string): ValidateFunction {
  let json: string
  try {
    json = JSON.stringify(schema)
  } catch (error) {
    throw new McpClientError(
      'MCP_SCHEMA_INVALID',
      `${where}: the schema is not plain JSON`,
      { where },
      { cause: error },
    )
  }
  if (json.length > MAX_SCHEMA_CHARS) {
    throw new McpClientError(
      'MCP_SCHEMA_INVALID',
      `${where}: the schema is ${json.length} characters of JSON, over the ${MAX_SCHEMA_CHARS} Keel accepts`,
      { where },
    )
  }
  const { $schema: _dialect, ...rest } = schema
  try {
    return ajvFor(sdk, schema).compile(rest)
  } catch (error) {
    throw new McpClientError(
      'MCP_SCHEMA_INVALID',
      `${where}: the schema does not compile: ${errorMessage(error)}`,
      { where },
      { cause: error },
    )
  }
}

function issuePath(error: ErrorObject): Array<string | number> {
  const parts = error.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/gu, '/').replace(/~0/gu, '~'))
    .map((p) => (/^\d+$/u.test(p) ? Number(p) : p))
  if (error.keyword === 'required' && typeof error.params.missingProperty === 'string') {
    parts.push(error.params.missingProperty)
  }
  if (error.keyword === 'additionalProperties' && typeof error.params.additionalProperty === 'string') {
    parts.push(error.params.additionalProperty)
  }
  return parts
}

function issueMessage(error: ErrorObject): string {
  if (error.keyword === 'required') return 'required'
  if (error.keyword === 'additionalProperties') return 'not allowed (unknown property)'
  if (error.keyword === 'enum' && Array.isArray(error.params.allowedValues)) {
    return `must be one of ${JSON.stringify(error.params.allowedValues).slice(0, 300)}`
  }
  return error.message ?? `fails ${error.keyword}`
}

/** The root of a tool's input schema, made an object schema (MCP requires `type: "object"`). */
function objectRoot(schema: unknown, where: string): Record<string, unknown> {
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema)) {
    throw new McpClientError('MCP_SCHEMA_INVALID', `${where}: the input schema is not an object`, { where })
  }
  const root = { ...(schema as Record<string, unknown>) }
  if (root.type === undefined) root.type = 'object'
  if (root.type !== 'object') {
    throw new McpClientError(
      'MCP_SCHEMA_INVALID',
      `${where}: the input schema's type is ${JSON.stringify(root.type)}; tools take an object`,
      { where },
    )
  }
  // zod reads `id` as a registry id; a draft-04 `id` has no meaning for the model either.
  delete root.id
  return root
}

/**
 * A zod schema for a tool's input that the model is shown as the server's own JSON Schema
 * (`z.toJSONSchema` gives the server's keys) and that validates with Ajv: each violation
 * becomes a zod issue at its path, so the model is told what to fix. Throws
 * {@link McpClientError} `MCP_SCHEMA_INVALID` for a schema that cannot be used.
 */
export function jsonSchemaInput(
  sdk: Sdk,
  schema: unknown,
  where: string,
): z.ZodType<Record<string, unknown>> {
  const root = objectRoot(schema, where)
  const validate = compileSchema(sdk, root, where)
  const { $schema: _dialect, ...shown } = root
  return z
    .looseObject({})
    .superRefine((value, ctx) => {
      if (validate(value)) return
      const errors = validate.errors ?? []
      for (const error of errors.slice(0, MAX_ISSUES)) {
        ctx.addIssue({ code: 'custom', message: issueMessage(error), path: issuePath(error) })
      }
      if (errors.length > MAX_ISSUES) {
        ctx.addIssue({
          code: 'custom',
          message: `and ${errors.length - MAX_ISSUES} more problem(s)`,
          path: [],
        })
      }
    })
    .meta(shown) as unknown as z.ZodType<Record<string, unknown>>
}

/**
 * The SDK's `jsonSchemaValidator` (it checks a tool's `structuredContent` against its
 * output schema) on the same bounded compile. A schema that cannot be compiled checks
 * nothing rather than failing the whole tool list.
 */
export const outputSchemaValidator = (sdk: Sdk) => ({
  getValidator<T>(schema: unknown) {
    let validate: ValidateFunction | undefined
    try {
      validate = compileSchema(sdk, schema as Record<string, unknown>, 'output schema')
    } catch {
      validate = undefined // unusable output schema: structured output goes unchecked
    }
    return (input: unknown) => {
      if (!validate || validate(input))
        return { valid: true as const, data: input as T, errorMessage: undefined }
      const first = validate.errors?.[0]
      return {
        valid: false as const,
        data: undefined,
        errorMessage: first ? `${first.instancePath || '(root)'} ${issueMessage(first)}` : 'does not match',
      }
    }
  },
})
