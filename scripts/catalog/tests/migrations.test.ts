// The SESSION_MIGRATIONS registry of @keel/session (read by verify, run by stores on load).
import { isKeelError } from '@keel/base'
import { migrateEvent, migrationChain, registerMigration, SESSION_MIGRATIONS } from '@keel/session'
import { describe, expect, it } from 'vitest'

describe('session migrations registry', () => {
  it('refuses a step that does not go from n to n + 1, or names no owner', () => {
    const bad = () =>
      registerMigration({ from: 1, to: 3, owner: '@keel/x', description: 'skip', migrate: (e) => e })
    expect(bad).toThrow(/from one format version to the next/)
    try {
      bad()
    } catch (e) {
      expect(isKeelError(e, 'MIGRATION_INVALID')).toBe(true)
    }
    expect(() =>
      registerMigration({ from: 1, to: 2, owner: ' ', description: 'x', migrate: (e) => e }),
    ).toThrow(/names no owner/)
  })

  it('chains registered steps and names the first missing one', () => {
    registerMigration({
      from: 101,
      to: 102,
      owner: '@keel/x',
      description: 'rename data.n to data.count',
      migrate: (e) => {
        const data = e.data as { n?: number }
        return { ...e, data: { count: data.n ?? 0 } }
      },
    })
    registerMigration({
      from: 102,
      to: 103,
      owner: '@keel/x',
      description: 'split in two',
      migrate: (e) => [e, { ...e, type: 'x/extra' }],
    })
    expect(SESSION_MIGRATIONS.get(101)?.map((m) => m.description)).toEqual(['rename data.n to data.count'])
    expect(migrationChain(101, 103).map((m) => m.from)).toEqual([101, 102])
    const out = migrateEvent({ type: 'x/y', seq: 0, time: 1, data: { n: 3 } }, 101, 103)
    expect(out).toEqual([
      { type: 'x/y', seq: 0, time: 1, data: { count: 3 } },
      { type: 'x/extra', seq: 0, time: 1, data: { count: 3 } },
    ])
    expect(() => migrationChain(101, 104)).toThrow(/no migration from session format 103 to 104/)
    expect(() =>
      registerMigration({ from: 101, to: 102, owner: '@keel/x', description: 'again', migrate: (e) => e }),
    ).toThrow(/already registers a migration from format 101/)
  })

  it('each owner registers its own upgrade of a step; they run in owner order, whatever the import order', () => {
    const tag = (owner: string) => (e: Parameters<typeof migrateEvent>[0]) => ({
      ...e,
      data: { ...(e.data as object), by: [...((e.data as { by?: string[] }).by ?? []), owner] },
    })
    // Registered in reverse name order.
    registerMigration({
      from: 201,
      to: 202,
      owner: '@keel/zeta',
      description: 'z',
      migrate: tag('@keel/zeta'),
    })
    registerMigration({
      from: 201,
      to: 202,
      owner: '@keel/alpha',
      description: 'a',
      migrate: tag('@keel/alpha'),
    })
    expect(SESSION_MIGRATIONS.get(201)?.map((m) => m.owner)).toEqual(['@keel/alpha', '@keel/zeta'])
    expect(migrateEvent({ type: 'x/y', seq: 0, time: 1, data: {} }, 201, 202)).toEqual([
      { type: 'x/y', seq: 0, time: 1, data: { by: ['@keel/alpha', '@keel/zeta'] } },
    ])
  })
})
