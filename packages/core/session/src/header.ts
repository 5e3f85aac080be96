import { toFrozenJson } from '@keel/base'
import { asSessionError, formatPath } from './envelope.js'
import { SessionError } from './errors.js'
import { sessionHeaderValidator } from './events.generated.js'
import type { SessionHeaderInit } from './options.js'
import { sessionIdSchema } from './registry.js'
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
      `session id ${JSON.stringify(id)} is invalid: use 1–128 of A-Z a-z 0-9 . _ - (no leading dot)`,
      { id },
    )
  }
  const version = header.version ?? SESSION_FORMAT_VERSION
  if (version !== SESSION_FORMAT_VERSION) {
    throw new SessionError(
      'HEADER_INVALID',
      `session ${id} has format version ${version}; this build reads version ${SESSION_FORMAT_VERSION} (stores migrate older versions before loading)`,
      { id, version },
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
  const checked = sessionHeaderValidator.safeParse(frozen)
  if (!checked.success) {
    const issue = checked.error.issues[0]!
    throw new SessionError(
      'HEADER_INVALID',
      `session ${id}: ${formatPath(issue.path, 'header')}: ${issue.message}`,
      {
        id,
        path: formatPath(issue.path, 'header'),
      },
    )
  }
  return frozen
}
