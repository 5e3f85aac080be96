import { boundIssues, elide, previewJson, toFrozenJson } from '@keel/base'
import { asSessionError } from './envelope.js'
import { SessionError } from './errors.js'
import { sessionHeaderValidator } from './events.generated.js'
import type { SessionHeaderInit } from './options.js'
import { sessionIdSchema } from './registry.js'
import { schemaIssues } from './schema-check.js'
import { SESSION_FORMAT_VERSION, type SessionHeader, type SessionId } from './types.js'

/**
 * Builds and checks a new session's header: a valid id, this build's format version,
 * `createdAt` from `clock` unless given, plain JSON matching the header validator. Returns
 * it frozen; throws `HEADER_INVALID` (or `NON_JSON_DATA`).
 */
export function buildHeader(id: string, header: SessionHeaderInit, clock: () => number): SessionHeader {
  if (!sessionIdSchema.safeParse(id).success) {
    throw new SessionError(
      'HEADER_INVALID',
      `session id ${previewJson(id, 160)} is invalid: use 1–128 of A-Z a-z 0-9 . _ - (no leading dot)`,
      { id: elide(id, 160) },
    )
  }
  const version = header.version ?? SESSION_FORMAT_VERSION
  if (version !== SESSION_FORMAT_VERSION) {
    throw new SessionError(
      'HEADER_INVALID',
      `session ${id} has format version ${previewJson(version, 40)}; this build reads version ${SESSION_FORMAT_VERSION} (stores migrate older versions before loading)`,
      { id, version: typeof version === 'number' ? version : previewJson(version, 40) },
    )
  }
  const full: SessionHeader = {
    ...header,
    version,
    id: id as SessionId,
    createdAt: header.createdAt ?? clock(),
  }
  let frozen: SessionHeader
  try {
    frozen = toFrozenJson(full, 'header', `session ${id} header`)
  } catch (error) {
    throw asSessionError(error)
  }
  const refused = schemaIssues(sessionHeaderValidator, frozen)
  if (refused) {
    const { issues } = boundIssues(refused, 'header')
    const issue = issues[0]!
    const others = refused.length - 1
    throw new SessionError(
      'HEADER_INVALID',
      `session ${id}: ${issue.path}: ${issue.message}${others > 0 ? ` (and ${others} more)` : ''}`,
      { id, path: issue.path, issues },
    )
  }
  return frozen
}
