import type { JsonObject } from '@keel/base'
import { migrateEvent, migrationChain, SESSION_FORMAT_VERSION } from '@keel/session'
import { SessionFormatUnsupported } from './errors.js'
import type { StoreNotice } from './store.js'

/**
 * Checks a stored format version before any event is parsed. Returns undefined for the
 * current version, and the stored version when it is older and the registered migration
 * chain (`registerMigration` in `@keel/session`) reaches the current one; throws
 * `SessionFormatUnsupported` with `direction: 'newer'` or `'no-migration'` otherwise.
 */
export function checkFormatVersion(id: string, found: unknown, where: string): number | undefined {
  if (found === SESSION_FORMAT_VERSION) return undefined
  const version = typeof found === 'number' && Number.isInteger(found) ? found : undefined
  if (version !== undefined && version > SESSION_FORMAT_VERSION) {
    throw new SessionFormatUnsupported(id, found, SESSION_FORMAT_VERSION, 'newer', where)
  }
  if (version === undefined || version < 1) {
    throw new SessionFormatUnsupported(
      id,
      found,
      SESSION_FORMAT_VERSION,
      version === undefined ? 'invalid' : 'no-migration',
      where,
    )
  }
  try {
    migrationChain(version, SESSION_FORMAT_VERSION)
  } catch (error) {
    throw new SessionFormatUnsupported(id, found, SESSION_FORMAT_VERSION, 'no-migration', where, {
      cause: error,
    })
  }
  return version
}

/**
 * Upgrades stored events of format `from` through the migration chain, lazily; seqs are
 * renumbered contiguously (a step may split or drop events).
 */
export function* migrateStored(events: Iterable<unknown>, from: number): Generator<unknown> {
  let seq = 0
  for (const raw of events) {
    for (const event of migrateEvent(raw as JsonObject, from, SESSION_FORMAT_VERSION))
      yield { ...event, seq: seq++ }
  }
}

/** The notice a backend adds when it upgrades a log on read. */
export function migratedNotice(id: string, from: number): StoreNotice {
  return {
    code: 'FORMAT_MIGRATED',
    message: `session ${id} is stored in format ${from}; upgraded to format ${SESSION_FORMAT_VERSION} while reading (opening it for writing rewrites it in the new format)`,
  }
}
