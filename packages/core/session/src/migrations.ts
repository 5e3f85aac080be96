import { type JsonObject, KeelError } from '@keel/base'

/**
 * One stored event as read from a log, before validation: the envelope fields and `data`
 * as plain JSON. A migration receives and returns this shape.
 */
export type StoredEventJson = JsonObject

/**
 * One owner's upgrade of the session format: rewrites the events written under format
 * `from` that it owns into format `to` (`to === from + 1`). `migrate` receives every event
 * (other owners' too: return those unchanged) and returns the rewritten event, or an array
 * (to split one event into several, or `[]` to drop one that no longer exists). Each package
 * registers its own upgrade for a version step, from a module its `src/index.ts` imports;
 * the upgrades of one step run in the order of their `owner` names, whatever the import
 * order. Stores run the chain on load; `pnpm verify-persistence-catalog` loads every golden
 * log through it.
 */
export interface SessionMigration {
  readonly from: number
  readonly to: number
  /** The package registering it (`@keel/todo`): one upgrade per owner and step. */
  readonly owner: string
  /** What changed and how old events are rewritten, for people and error messages. */
  readonly description: string
  migrate(event: StoredEventJson): StoredEventJson | StoredEventJson[]
}

/** A refused registration or an impossible upgrade. */
export class SessionMigrationError extends KeelError<'MIGRATION_INVALID' | 'MIGRATION_MISSING'> {}

const registry = new Map<number, SessionMigration[]>()

/** Every registered upgrade by its `from` version, each step's upgrades in `owner` order. */
export const SESSION_MIGRATIONS: ReadonlyMap<number, readonly SessionMigration[]> = registry

/**
 * Registers one owner's upgrade for one format step. Call it at module load, from a source
 * file that the package's `src/index.ts` imports (verify reads the registry by importing the
 * packages, so a call in a file nothing imports does not count).
 */
export function registerMigration(migration: SessionMigration): void {
  const { from, to, owner } = migration
  if (!Number.isInteger(from) || !Number.isInteger(to) || from < 1 || to !== from + 1) {
    throw new SessionMigrationError(
      'MIGRATION_INVALID',
      `a migration goes from one format version to the next (from: n, to: n + 1); got from ${from} to ${to}`,
      { from, to },
    )
  }
  if (typeof owner !== 'string' || owner.trim() === '') {
    throw new SessionMigrationError(
      'MIGRATION_INVALID',
      `a migration from format ${from} names no owner; set owner to the registering package's name`,
      { from, to },
    )
  }
  const steps = registry.get(from) ?? []
  const existing = steps.find((m) => m.owner === owner)
  if (existing) {
    throw new SessionMigrationError(
      'MIGRATION_INVALID',
      `${owner} already registers a migration from format ${from} ("${existing.description}"); one per owner and step — put both rewrites in one migrate()`,
      { from, to, owner },
    )
  }
  registry.set(
    from,
    [...steps, Object.freeze({ ...migration })].sort((a, b) =>
      a.owner < b.owner ? -1 : a.owner > b.owner ? 1 : 0,
    ),
  )
}

/**
 * The upgrades from format `from` to format `to`, in order (each step's in `owner` order).
 * Throws `MIGRATION_MISSING` naming the first step nobody registered.
 */
export function migrationChain(from: number, to: number): SessionMigration[] {
  const chain: SessionMigration[] = []
  for (let v = from; v < to; v++) {
    const steps = registry.get(v)
    if (!steps || steps.length === 0) {
      throw new SessionMigrationError(
        'MIGRATION_MISSING',
        `no migration from session format ${v} to ${v + 1} is registered, so a log written under format ${from} cannot be upgraded to ${to}`,
        { from, to, missing: v },
      )
    }
    chain.push(...steps)
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
