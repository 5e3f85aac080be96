import { KeelError } from '@keel/base'

/**
 * Thrown by a tool's `call` when it fails in a way the model can act on. `code` is a
 * stable UPPER_SNAKE code (`FILE_NOT_FOUND`, `EDIT_AMBIGUOUS`, `TIMEOUT`, …) that
 * {@link runToolCall} copies to the result's `errorCode`; the message becomes the text the
 * model reads, so say what went wrong and what to do next.
 */
export class ToolError<Code extends string = string> extends KeelError<Code> {}

/** Codes of {@link ToolRegistryError}. */
export type ToolRegistryErrorCode =
  /** The name does not match `^[a-zA-Z0-9_-]{1,64}$`. */
  | 'TOOL_NAME_INVALID'
  /** A tool of that name is already registered. */
  | 'TOOL_NAME_DUPLICATE'
  /** No tool of that name is registered. */
  | 'TOOL_NOT_FOUND'
  /** The input schema is not a JSON object schema (the model APIs require an object root). */
  | 'TOOL_SCHEMA_NOT_OBJECT'
  /** The input schema uses a zod type JSON Schema cannot express (dates, functions, …). */
  | 'TOOL_SCHEMA_UNREPRESENTABLE'
  /** The tool definition itself is malformed (no description, no `call`, bad annotations). */
  | 'TOOL_DEFINITION_INVALID'

/** A tool definition or registration that cannot be accepted. `details.tool` names the tool. */
export class ToolRegistryError extends KeelError<ToolRegistryErrorCode> {}

/**
 * The `errorCode`s {@link runToolCall} itself produces. Tools add their own through
 * {@link ToolError}.
 */
export type ToolRuntimeErrorCode =
  /** The arguments text is not valid JSON; the tool was not run. */
  | 'TOOL_INPUT_INVALID_JSON'
  /** The arguments do not match the tool's input schema; the tool was not run. */
  | 'TOOL_INPUT_INVALID'
  /** The tool threw something that is not a {@link ToolError}, or returned a malformed result. */
  | 'TOOL_FAILED'
  /** The call was cancelled through the context's abort signal. */
  | 'TOOL_ABORTED'
  /** The call passed its deadline (the tool's `timeoutMs`, else the runtime's) and was stopped. */
  | 'TOOL_TIMEOUT'
