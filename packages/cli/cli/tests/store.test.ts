import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { describe, expect, it, onTestFinished } from 'vitest'
import { runCli, runDemo } from '../src/index.js'
import { selectStore } from '../src/store.js'

function capture() {
  const out: string[] = []
  const err: string[] = []
  return { out, err, write: (t: string) => void out.push(t), error: (t: string) => void err.push(t) }
}

describe('store selection', () => {
  it('defaults to JSONL under KEEL_HOME, and KEEL_STORE / --store choose the backend', async () => {
    const home = await mkdtemp(join(tmpdir(), 'keel-store-sel-'))
    const jsonl = await selectStore(undefined, { KEEL_HOME: home })
    expect(jsonl.kind).toBe('jsonl')
    expect(jsonl.where).toBe(home)
    expect(jsonl.logOf('abc')).toBe(join(home, 'sessions', 'abc', 'session.jsonl'))
    await jsonl.store.close()
    const fromEnv = await selectStore(undefined, {
      KEEL_STORE: 'postgres',
      KEEL_PG_URL: 'postgres://u:p@127.0.0.1:1/x',
    })
    expect(fromEnv.kind).toBe('postgres')
    await fromEnv.store.close()
    // the flag wins over the environment
    const flag = await selectStore('jsonl', { KEEL_STORE: 'postgres', KEEL_HOME: home })
    expect(flag.kind).toBe('jsonl')
    await flag.store.close()
  })

  it('refuses an unknown backend and a postgres store without KEEL_PG_URL, with their codes', async () => {
    await expect(selectStore('sqlite', {})).rejects.toThrow(
      expect.objectContaining({ code: 'STORE_KIND_INVALID' }),
    )
    const saved = process.env.KEEL_PG_URL
    delete process.env.KEEL_PG_URL
    try {
      await expect(selectStore('postgres', {})).rejects.toThrow(
        expect.objectContaining({ code: 'KEEL_PG_URL_MISSING' }),
      )
    } finally {
      if (saved !== undefined) process.env.KEEL_PG_URL = saved
    }
    const c = capture()
    expect(
      await runCli(['sessions', 'list', '--store', 'sqlite'], { env: {}, out: c.write, err: c.error }),
    ).toBe(2)
    expect(c.err.join('')).toContain('STORE_KIND_INVALID')
    const d = capture()
    const outcome = await runDemo({
      argv: ['--store', 'sqlite'],
      env: { KEEL_HOME: await mkdtemp(join(tmpdir(), 'keel-store-bad-')) },
      out: { write: d.write, color: false },
      err: d.error,
    })
    expect(outcome.exitCode).toBe(2)
    expect(d.err.join('')).toContain('use jsonl (the default) or postgres')
  })
})

const PG_URL = process.env.KEEL_PG_URL
const pgReason = 'KEEL_PG_URL is not set: the demo on PostgreSQL is skipped'
if (!PG_URL && process.env.CI) {
  it('has a PostgreSQL server in CI', () => {
    throw new Error('CI is set but KEEL_PG_URL is not: .ci/run must source scripts/ci/start-postgres.sh')
  })
}
describe.skipIf(!PG_URL)(PG_URL ? 'pnpm demo --store postgres' : pgReason, () => {
  it('runs the scripted task with the PostgreSQL store, and keel sessions reads it back', async () => {
    // a schema of its own: the shared server's default schema may hold another build's tables
    const schema = `keel_cli_demo_${process.pid}_${Date.now()}`
    const env = {
      KEEL_PG_URL: PG_URL!,
      KEEL_PG_SCHEMA: schema,
      KEEL_HOME: await mkdtemp(join(tmpdir(), 'keel-pg-demo-')),
    }
    onTestFinished(async () => {
      const client = new pg.Client({ connectionString: PG_URL })
      await client.connect()
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      await client.end()
    })
    const c = capture()
    const outcome = await runDemo({
      argv: ['--store', 'postgres'],
      env,
      out: { write: c.write, color: false },
      err: c.error,
    })
    expect(outcome.exitCode, c.err.join('')).toBe(0)
    const printed = c.out.join('')
    expect(printed).toContain('store      PostgreSQL')
    expect(printed).toContain(`sessions show ${outcome.sessionId} --store postgres`)
    const list = capture()
    expect(
      await runCli(['sessions', 'list', '--store', 'postgres', '--limit', '500'], {
        env,
        out: list.write,
        err: list.error,
      }),
    ).toBe(0)
    expect(list.out.join('')).toContain(outcome.sessionId!)
    const show = capture()
    expect(
      await runCli(['sessions', 'show', outcome.sessionId!], {
        env: { ...env, KEEL_STORE: 'postgres' },
        out: show.write,
        err: show.error,
      }),
    ).toBe(0)
    const text = show.out.join('')
    expect(text).toMatch(/tool\/call\s+edit_file path=greet\.mjs/)
    expect(text).toMatch(/turn\/end\s+turn 1 completed/)
  })
})
