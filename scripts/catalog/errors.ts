import { KeelError } from '@keel/base'

/**
 * Why the catalog could not be generated or verified. Each problem names `path:line`.
 * - `NO_SESSION_MODULE`: the session package or its `SessionEventMap` was not found.
 * - `EVENT_WITHOUT_JSDOC`: an event member has no JSDoc (it is rendered into the catalog).
 * - `NON_PERSISTABLE_TYPE`: a payload type is not plain JSON (function, Date, bigint, …).
 * - `DUPLICATE_EVENT_TYPE`: the same event type is declared twice.
 * - `WRONG_MERGE_MODULE`: `SessionEventMap` merged into a module other than the session's.
 * - `EVENT_TYPE_NOT_A_STRING`: a `SessionEventMap` member whose key is not a string literal.
 * - `SOURCE_HAS_ERRORS`: a compiler diagnostic (a syntax error in any package source, any error
 *   in a file that declares events or a type they reach); the message is the diagnostic.
 * - `EVENT_TYPE_NAME_INVALID`: an event type that is not `owner/verb` in lower-case kebab segments.
 * - `REFINEMENT_LOST`: refinement tags on an alias the checker does not keep (`type Id = string`).
 * - `FORMAT_VERSION_NOT_LITERAL`: `SESSION_FORMAT_VERSION` missing or not an integer literal.
 * - `EVENT_EXAMPLE_INVALID`: an event without an `@example`, or one that is not JSON or fails
 *   the event's own validator.
 * - `FOREIGN_TYPE`: a payload's declarations reach a type declared outside the repository (npm,
 *   `@types/node`) or one that does not resolve, even inside a conditional or mapped type.
 * - `OUTPUT_LINE_INVALID`: a line type of `keel -p --output stream-json` (`@keel/cli`'s
 *   `src/output-lines.ts`) without JSDoc or `@example`, with an example its validator refuses,
 *   or whose `type` is not its key.
 */
export type CatalogErrorCode =
  | 'NO_SESSION_MODULE'
  | 'EVENT_WITHOUT_JSDOC'
  | 'NON_PERSISTABLE_TYPE'
  | 'DUPLICATE_EVENT_TYPE'
  | 'WRONG_MERGE_MODULE'
  | 'EVENT_TYPE_NOT_A_STRING'
  | 'REFINEMENT_LOST'
  | 'SOURCE_HAS_ERRORS'
  | 'EVENT_TYPE_NAME_INVALID'
  | 'FORMAT_VERSION_NOT_LITERAL'
  | 'EVENT_EXAMPLE_INVALID'
  | 'FOREIGN_TYPE'
  | 'OUTPUT_LINE_INVALID'

/** One problem found in the sources. */
export interface CatalogProblem {
  code: CatalogErrorCode
  /** `path:line` relative to the repository root. */
  loc: string
  message: string
  event?: string
  path?: string
  /** The problem is an `any` type (an unresolved import in a fast load triggers a full one). */
  anyType?: boolean
}

/** Thrown by {@link generateCatalog} when the sources have problems; `problems` lists them all. */
export class CatalogError extends KeelError<'CATALOG_SOURCE_INVALID'> {
  readonly problems: readonly CatalogProblem[]
  constructor(problems: CatalogProblem[]) {
    super(
      'CATALOG_SOURCE_INVALID',
      `the persistence catalog cannot be generated:\n${problems.map((p) => `  ${p.message}`).join('\n')}`,
      { problems: problems.map((p) => ({ ...p })) },
    )
    this.problems = problems
  }
}
