import { SESSION_FORMAT_VERSION, type SessionHeader } from '@keel/session'
import { SessionCorrupt, type StoreLocation } from '@keel/store'
import { z } from 'zod'

/**
 * The stored logical header, mirroring `SessionHeader` of `@keel/session` field by field
 * (strict: an unknown field is refused, as a mistyped one is).
 */
const headerSchema = z.strictObject({
  version: z.number().int().min(1),
  id: z.string(),
  createdAt: z.number().finite(),
  cwd: z.string().optional(),
  parentSession: z.string().optional(),
  seedLength: z.number().int().nonnegative().optional(),
  agentPreset: z.string().optional(),
  title: z.string().optional(),
})

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
    throw new SessionCorrupt(id, location, `the header is not valid JSON (${(error as Error).message})`)
  }
  const parsed = headerSchema.safeParse(raw)
  if (!parsed.success) {
    const issues = parsed.error.issues
      .map((i) => `${i.path.length ? i.path.join('.') : 'header'}: ${i.message}`)
      .join('; ')
    throw new SessionCorrupt(id, location, `the header is invalid (${issues})`, { cause: parsed.error })
  }
  const header = raw as SessionHeader
  if (header.id !== id) {
    throw new SessionCorrupt(id, location, `the header names session ${JSON.stringify(header.id)}`)
  }
  return migratedFrom === undefined ? header : { ...header, version: SESSION_FORMAT_VERSION }
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/

/**
 * Whether PostgreSQL's `text` type can hold `value` exactly: no NUL, no lone surrogate
 * (the client would send U+FFFD for it). Used for the `cwd` column, an index only; the
 * header keeps the exact value either way.
 */
export function textStorable(value: string): boolean {
  return !value.includes('\u0000') && !LONE_SURROGATE.test(value)
}
