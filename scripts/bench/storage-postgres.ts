// The PostgreSQL part of `pnpm bench storage` (called by storage.bench.ts): batched append
// and load of the same ~100k events, each against a raw baseline in the same run:
// append against a raw `unnest` insert of the same lines into a table of the same shape
// (primary key (session_id, seq), text line), alternating batch by batch; load against a
// raw `SELECT` of the same rows (and that SELECT plus `JSON.parse` of every line).
import type { Session } from '@keel/session'
import { MemoryStore } from '@keel/store'
import { PostgresStore } from '@keel/store-postgres'
import { appendSampleTurn, SAMPLE_TURN_EVENTS } from '@keel/store-testkit'
import pg from 'pg'

const secs = (ns: bigint) => Number(ns) / 1e9
const ratio = (a: bigint, b: bigint) => `${(Number(a) / Number(b)).toFixed(2)}x`

async function timed<T>(run: () => Promise<T>): Promise<[bigint, T]> {
  const t0 = process.hrtime.bigint()
  const value = await run()
  return [process.hrtime.bigint() - t0, value]
}

/** The raw baseline's insert: the same kind of lines as `text[]`, one `unnest` insert, autocommit. */
async function rawInsert(
  client: pg.Client,
  table: string,
  lines: readonly string[],
  from: number,
  to: number,
) {
  const seqs: number[] = []
  for (let i = from; i < to; i++) seqs.push(i)
  await client.query(
    `INSERT INTO ${table} (session_id, seq, line) SELECT 'raw', * FROM unnest($1::integer[], $2::text[])`,
    [seqs, lines.slice(from, to)],
  )
}

/** The lines of `turns` sample turns, serialized before any timing (the baseline pays no stringify). */
async function templateLines(turns: number, pad: string): Promise<string[]> {
  const memory = new MemoryStore()
  const handle = await memory.create({ id: 'template' })
  for (let i = 0; i < turns; i++) appendSampleTurn(handle.session, pad)
  await handle.close()
  return handle.session.events.map((e) => JSON.stringify(e))
}

export async function postgresBench(): Promise<void> {
  const url = process.env.KEEL_PG_URL
  if (!url) {
    console.log(
      'postgres: skipped (KEEL_PG_URL is not set; as root, `source scripts/ci/start-postgres.sh` sets it)',
    )
    return
  }
  const schema = `keel_bench_${process.pid}`
  const table = `${schema}.raw_events`
  const store = new PostgresStore({ url, schema })
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const turns = Math.ceil(100_000 / SAMPLE_TURN_EVENTS)
    const perBatch = 100 // turns per flush: 1,100 events per transaction
    const warmupBatches = 2
    const handle = await store.create({ id: 'pg-bench' })
    await client.query(
      `CREATE TABLE ${table} (session_id text NOT NULL, seq integer NOT NULL, line text NOT NULL, PRIMARY KEY (session_id, seq))`,
    )
    const session: Session = handle.session
    const pad = 'z'.repeat(120)
    const lines = await templateLines(turns, pad)
    let keel = 0n // session.append + flush
    let keelFlush = 0n // flush only
    let raw = 0n
    let batch = 0
    for (let done = 0; done < turns; batch++) {
      const n = Math.min(perBatch, turns - done)
      const from = done * SAMPLE_TURN_EVENTS
      const to = (done + n) * SAMPLE_TURN_EVENTS
      const keelBatch = async () => {
        const t0 = process.hrtime.bigint()
        for (let i = 0; i < n; i++) appendSampleTurn(session, pad)
        const f0 = process.hrtime.bigint()
        await handle.flush()
        const t1 = process.hrtime.bigint()
        return [t1 - t0, t1 - f0] as const
      }
      const rawBatch = () => timed(() => rawInsert(client, table, lines, from, to))
      // alternate which goes first, so neither always runs right after the other's commit
      let k: readonly [bigint, bigint]
      let r: bigint
      if (batch % 2 === 0) {
        k = await keelBatch()
        ;[r] = await rawBatch()
      } else {
        ;[r] = await rawBatch()
        k = await keelBatch()
      }
      done += n
      if (batch >= warmupBatches) {
        keel += k[0]
        keelFlush += k[1]
        raw += r
      }
    }
    const events = session.nextSeq
    await handle.close()
    const measured = (batch - warmupBatches) * perBatch * SAMPLE_TURN_EVENTS
    console.log(
      `postgres append: ${events} events in transactions of ${perBatch * SAMPLE_TURN_EVENTS} (alternating with the baseline); raw unnest insert of the same lines ${secs(raw).toFixed(2)} s`,
    )
    console.log(
      `  keel flush() only (the store's write path) ${secs(keelFlush).toFixed(2)} s = ${Math.round(measured / secs(keelFlush))} events/s -> ratio ${ratio(keelFlush, raw)} (goal <= 1.3x)`,
    )
    console.log(
      `  keel end to end (session.append validation + serialization + write) ${secs(keel).toFixed(2)} s -> ratio ${ratio(keel, raw)}`,
    )
    // Load: best of 3 each, alternating.
    let keelLoad = BigInt(Number.MAX_SAFE_INTEGER)
    let rawSelect = keelLoad
    let rawParse = keelLoad
    for (let i = 0; i < 3; i++) {
      const [k, loaded] = await timed(() => store.load('pg-bench'))
      if (loaded.nextSeq !== events) throw new Error('postgres load lost events')
      const [r, rows] = await timed(async () => {
        const result = await client.query<{ seq: number; line: string }>(
          `SELECT seq, line FROM ${table} WHERE session_id = 'raw' ORDER BY seq`,
        )
        return result.rows
      })
      if (rows.length !== events) throw new Error(`raw select found ${rows.length} rows, not ${events}`)
      const [p] = await timed(async () => {
        const result = await client.query<{ seq: number; line: string }>(
          `SELECT seq, line FROM ${table} WHERE session_id = 'raw' ORDER BY seq`,
        )
        return result.rows.map((row) => JSON.parse(row.line) as unknown)
      })
      if (k < keelLoad) keelLoad = k
      if (r < rawSelect) rawSelect = r
      if (p < rawParse) rawParse = p
    }
    console.log(
      `postgres load of ${events} events (validated Session): keel ${secs(keelLoad).toFixed(2)} s; raw SELECT of the same rows ${secs(rawSelect).toFixed(2)} s -> ratio ${ratio(keelLoad, rawSelect)} (goal <= 1.3x); raw SELECT + JSON.parse ${secs(rawParse).toFixed(2)} s -> ratio ${ratio(keelLoad, rawParse)}`,
    )
  } finally {
    await store.close()
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await client.end()
  }
}
