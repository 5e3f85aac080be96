import { type JsonObject, KeelError } from '@keel/base'

/**
 * One stored event as read from a log, before validation: the envelope fields and `data`
 * as plain JSON. A migration receives and returns this shape.
 */
export type StoredEventJson = JsonObject

/**
 * One upgrade step of the session format: rewrites every event written under format
 * `from` into format `to` (`to === from + 1`). `migrate` returns the rewritten event, or
 * an array (to split one event into several, or `[]` to drop one that no longer exists).
 * Stores run the chain on load; `pnpm verify-persistence-catalog` requires one for every
 * breaking change, registered with `registerMigration({ from, to, … })` so it can be read
 * from the source.
 */
export interface SessionMigration {
  readonly from: number
  readonly to: number
  /** What changed and how old events are rewritten, for people and error messages. */
  readonly description: string
  migrate(event: StoredEventJson): StoredEventJson | StoredEventJson[]
}

/** A refused registration or an impossible upgrade. */
export class SessionMigrationError extends KeelError<'MIGRATION_INVALID' | 'MIGRATION_MISSING'> {}

const registry = new Map<number, SessionMigration>()

/** Every registered migration, keyed by its `from` version. */
export const SESSION_MIGRATIONS: ReadonlyMap<number, SessionMigration> = registry

/**
 * Registers one format upgrade step. Call it at module load, from a source file of a
 * package the session loads, with literal `from` and `to` numbers (the catalog verifier
 * reads them statically).
 */
export function registerMigration(migration: SessionMigration): void {
  const { from, to } = migration
  if (!Number.isInteger(from) || !Number.isInteger(to) || from < 1 || to !== from + 1) {
    throw new SessionMigrationError(
      'MIGRATION_INVALID',
      `a migration goes from one format version to the next (from: n, to: n + 1); got from ${from} to ${to}`,
      { from, to },
    )
  }
  const existing = registry.get(from)
  if (existing && existing !== migration) {
    throw new SessionMigrationError(
      'MIGRATION_INVALID',
      `a migration from format ${from} is already registered ("${existing.description}"); one step per version`,
      { from, to },
    )
  }
  registry.set(from, Object.freeze({ ...migration }))
}

/**
 * The migrations that upgrade format `from` to format `to`, in order. Throws
 * `MIGRATION_MISSING` naming the first missing step.
 */
export function migrationChain(from: number, to: number): SessionMigration[] {
  const chain: SessionMigration[] = []
  for (let v = from; v < to; v++) {
    const step = registry.get(v)
    if (!step) {
      throw new SessionMigrationError(
        'MIGRATION_MISSING',
        `no migration from session format ${v} to ${v + 1} is registered, so a log written under format ${from} cannot be upgraded to ${to}`,
        { from, to, missing: v },
      )
    }
    chain.push(step)
  }
  return chain
}

/** Runs `event` through the chain from `from` to `to`; returns the upgraded events (0, 1 or more). */
export function migrateEvent(event: StoredEventJson, from: number, to: number): StoredEventJson[] {
  let events = [event]
  for (const step of migrationChain(from, to)) {
    events = events.flatMap((e) => {
      const out = step.migrate(e)
      return Array.isArray(out) ? out : [out]
    })
  }
  return events
}
