import { boundIssues, errorMessage, previewJson } from '@keel/base'
import { SESSION_FORMAT_VERSION, type SessionHeader, sessionHeaderValidator } from '@keel/session'
import { SessionCorrupt, type StoreLocation } from './errors.js'

/**
 * Parses and validates the stored header text of session `id`: JSON, an object of the
 * header's fields with their types, naming this session. `SessionCorrupt` otherwise.
 * A header of an older format (`migratedFrom`) gets the current version.
 */
export function parseHeader(
  id: string,
  text: string,
  location: StoreLocation,
  migratedFrom: number | undefined,
): SessionHeader {
  let raw: unknown
  try {
    raw = JSON.parse(text)
  } catch (error) {
    throw new SessionCorrupt(id, location, `the header is not valid JSON (${errorMessage(error)})`)
  }
  const parsed = sessionHeaderValidator.safeParse(raw)
  if (!parsed.success) {
    const { issues: shown, more } = boundIssues(parsed.error.issues, 'header')
    const issues =
      shown.map((i) => `${i.path}: ${i.message}`).join('; ') + (more > 0 ? `; and ${more} more` : '')
    throw new SessionCorrupt(id, location, `the header is invalid (${issues})`, { cause: parsed.error })
  }
  const header = raw as SessionHeader
  if (header.id !== id) {
    throw new SessionCorrupt(id, location, `the header names session ${previewJson(header.id)}`)
  }
  return migratedFrom === undefined ? header : { ...header, version: SESSION_FORMAT_VERSION }
}
