// The SESSION_MIGRATIONS registry of @keel/session (read by verify, run by stores on load).
import { isKeelError } from '@keel/base'
import { migrateEvent, migrationChain, registerMigration, SESSION_MIGRATIONS } from '@keel/session'
import { describe, expect, it } from 'vitest'

describe('session migrations registry', () => {
  it('refuses a step that does not go from n to n + 1', () => {
    const bad = () => registerMigration({ from: 1, to: 3, description: 'skip', migrate: (e) => e })
    expect(bad).toThrow(/from one format version to the next/)
    try {
      bad()
    } catch (e) {
      expect(isKeelError(e, 'MIGRATION_INVALID')).toBe(true)
    }
  })

  it('chains registered steps and names the first missing one', () => {
    registerMigration({
      from: 101,
      to: 102,
      description: 'rename data.n to data.count',
      migrate: (e) => {
        const data = e.data as { n?: number }
        return { ...e, data: { count: data.n ?? 0 } }
      },
    })
    registerMigration({
      from: 102,
      to: 103,
      description: 'split in two',
      migrate: (e) => [e, { ...e, type: 'x/extra' }],
    })
    expect(SESSION_MIGRATIONS.get(101)?.description).toBe('rename data.n to data.count')
    expect(migrationChain(101, 103).map((m) => m.from)).toEqual([101, 102])
    const out = migrateEvent({ type: 'x/y', seq: 0, time: 1, data: { n: 3 } }, 101, 103)
    expect(out).toEqual([
      { type: 'x/y', seq: 0, time: 1, data: { count: 3 } },
      { type: 'x/extra', seq: 0, time: 1, data: { count: 3 } },
    ])
    expect(() => migrationChain(101, 104)).toThrow(/no migration from session format 103 to 104/)
    expect(() => registerMigration({ from: 101, to: 102, description: 'again', migrate: (e) => e })).toThrow(
      /already registered/,
    )
  })
})
