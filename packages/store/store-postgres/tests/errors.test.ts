import { KeelError } from '@keel/base'
import { describe, expect, it } from 'vitest'
import { storeError } from '../src/errors.js'

const where = 'PostgreSQL at db.example:5432/keel'
const op = { what: 'loading session s1', id: 's1' }
/** A server error as `pg` gives it: severity, SQLSTATE code, message. */
const server = (code: string, message: string) =>
  Object.assign(new Error(message), { severity: 'ERROR', code })
const socket = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:5432`), { code })

describe('storeError: every driver failure gets a typed code', () => {
  it.each([
    ['connection refused', socket('ECONNREFUSED'), 'STORE_UNAVAILABLE', true, /refused the connection/],
    ['connection reset', socket('ECONNRESET'), 'STORE_UNAVAILABLE', true, /connection failed/],
    ['host not found', socket('ENOTFOUND'), 'STORE_UNAVAILABLE', true, /connection failed/],
    [
      'admin shutdown',
      server('57P01', 'terminating connection due to administrator command'),
      'STORE_UNAVAILABLE',
      true,
      /shutting down/,
    ],
    [
      'starting up',
      server('57P03', 'the database system is starting up'),
      'STORE_UNAVAILABLE',
      true,
      /starting up/,
    ],
    [
      'statement timeout',
      server('57014', 'canceling statement due to statement timeout'),
      'STORE_UNAVAILABLE',
      true,
      /statement timeout/,
    ],
    [
      'too many connections',
      server('53300', 'sorry, too many clients already'),
      'STORE_UNAVAILABLE',
      true,
      /no connection to spare/,
    ],
    [
      'disk full',
      server('53100', 'could not extend file'),
      'STORE_UNAVAILABLE',
      true,
      /ran out of a resource/,
    ],
    [
      'connection exception',
      server('08006', 'connection failure'),
      'STORE_UNAVAILABLE',
      true,
      /connection failed/,
    ],
    [
      'bad password',
      server('28P01', 'password authentication failed for user "keel"'),
      'STORE_UNAVAILABLE',
      false,
      /refused the login.*KEEL_PG_URL/,
    ],
    [
      'no database',
      server('3D000', 'database "nope" does not exist'),
      'STORE_UNAVAILABLE',
      false,
      /does not exist/,
    ],
    [
      'terminated',
      new Error('Connection terminated unexpectedly'),
      'STORE_UNAVAILABLE',
      true,
      /closed by the server/,
    ],
    ['connect timeout', new Error('timeout expired'), 'STORE_UNAVAILABLE', true, /connecting timed out/],
    [
      'not queryable',
      new Error('Client has encountered a connection error and is not queryable'),
      'STORE_UNAVAILABLE',
      true,
      /broke/,
    ],
    [
      'store closed',
      new Error('Cannot use a pool after calling end on the pool'),
      'STORE_UNAVAILABLE',
      false,
      /store was closed/,
    ],
    [
      'permission denied',
      server('42501', 'permission denied for schema keel'),
      'STORE_QUERY_FAILED',
      undefined,
      /refused a statement.*42501/,
    ],
    [
      'anything else',
      new TypeError('weird'),
      'STORE_QUERY_FAILED',
      undefined,
      /failed while loading session s1: weird/,
    ],
  ])('%s', (_what, error, code, transient, message) => {
    const mapped = storeError(error, where, op) as KeelError
    expect(mapped).toBeInstanceOf(KeelError)
    expect(mapped.code).toBe(code)
    expect(mapped.details.transient).toBe(transient)
    expect(mapped.details).toMatchObject({ where, operation: op.what, id: 's1' })
    expect(mapped.message).toMatch(message)
    expect(mapped.cause).toBe(error)
  })

  it('keeps errno and SQLSTATE in details, bounds a huge driver message, and passes Keel errors through', () => {
    expect((storeError(socket('ECONNREFUSED'), where, op) as KeelError).details.errno).toBe('ECONNREFUSED')
    expect((storeError(server('42501', 'x'), where, op) as KeelError).details.sqlstate).toBe('42501')
    const huge = storeError(server('22021', `invalid byte sequence ${'x'.repeat(1 << 20)}`), where, op)
    expect(huge.message.length).toBeLessThan(1_000)
    const ours = new KeelError('SESSION_NOT_FOUND', 'not here')
    expect(storeError(ours, where, op)).toBe(ours)
  })
})
