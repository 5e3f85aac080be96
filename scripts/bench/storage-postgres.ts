// The PostgreSQL part of `pnpm bench storage` (called by storage.bench.ts): batched append
// and load of ~100k events, each against a raw baseline measured in the same run:
// append against a raw `unnest` insert of the same lines (serialized before timing) into
// a table of the same shape (primary key (session_id, seq), text line), alternating batch
// by batch; load against a raw `SELECT` of the same rows, and that SELECT plus `JSON.parse`.
import type { Session } from '@keel/session'
import { MemoryStore } from '@keel/store'
import { PostgresStore } from '@keel/store-postgres'
import { appendSampleTurn, SAMPLE_TURN_EVENTS } from '@keel/store-testkit'
import pg from 'pg'

const secs = (ns: bigint) => Number(ns) / 1e9
const ratio = (a: bigint, b: bigint) => `${(Number(a) / Number(b)).toFixed(2)}x`
const PAD = 'z'.repeat(120)

async function timed<T>(run: () => Promise<T>): Promise<[bigint, T]> {
  const t0 = process.hrtime.bigint()
  const value = await run()
  return [process.hrtime.bigint() - t0, value]
}

/** The lines of `turns` sample turns, serialized before any timing (the baseline pays no stringify). */
async function templateLines(turns: number): Promise<string[]> {
  const memory = new MemoryStore()
  const handle = await memory.create({ id: 'template' })
  for (let i = 0; i < turns; i++) appendSampleTurn(handle.session, PAD)
  await handle.close()
  return handle.session.events.map((e) => JSON.stringify(e))
}

interface AppendResult {
  events: number
  keel: bigint
  keelFlush: bigint
  raw: bigint
}

/**
 * Appends `turns` sample turns to a new session, `perBatch` turns per flush, and the same
 * number of template lines to the raw table per batch; alternates which goes first.
 */
async function appendPhase(
  store: PostgresStore,
  client: pg.Client,
  table: string,
  id: string,
  turns: number,
  perBatch: number,
  warmupBatches: number,
): Promise<AppendResult> {
  const lines = await templateLines(turns)
  const handle = await store.create({ id })
  const session: Session = handle.session
  const result: AppendResult = { events: 0, keel: 0n, keelFlush: 0n, raw: 0n }
  let batch = 0
  for (let done = 0; done < turns; batch++) {
    const n = Math.min(perBatch, turns - done)
    const from = done * SAMPLE_TURN_EVENTS
    const to = (done + n) * SAMPLE_TURN_EVENTS
    const keelBatch = async () => {
      const t0 = process.hrtime.bigint()
      for (let i = 0; i < n; i++) appendSampleTurn(session, PAD)
      const f0 = process.hrtime.bigint()
      await handle.flush()
      const t1 = process.hrtime.bigint()
      return [t1 - t0, t1 - f0] as const
    }
    const rawBatch = async () => {
      const seqs: number[] = []
      for (let i = from; i < to; i++) seqs.push(i)
      const slice = lines.slice(from, to)
      const [r] = await timed(() =>
        client.query(
          `INSERT INTO ${table} (session_id, seq, line) SELECT $1, * FROM unnest($2::integer[], $3::text[])`,
          [id, seqs, slice],
        ),
      )
      return r
    }
    let k: readonly [bigint, bigint]
    let r: bigint
    if (batch % 2 === 0) {
      k = await keelBatch()
      r = await rawBatch()
    } else {
      r = await rawBatch()
      k = await keelBatch()
    }
    done += n
    if (batch >= warmupBatches) {
      result.events += n * SAMPLE_TURN_EVENTS
      result.keel += k[0]
      result.keelFlush += k[1]
      result.raw += r
    }
  }
  await handle.close()
  return result
}

function printAppend(label: string, r: AppendResult): void {
  console.log(
    `postgres append, ${label}: ${r.events} events measured (alternating with the baseline); raw unnest insert of the same lines ${secs(r.raw).toFixed(2)} s`,
  )
  console.log(
    `  keel flush() only (the store's write path: one guarded statement per batch) ${secs(r.keelFlush).toFixed(2)} s = ${Math.round(r.events / secs(r.keelFlush))} events/s -> ratio ${ratio(r.keelFlush, r.raw)} (goal <= 1.3x)`,
  )
  console.log(
    `  keel end to end (session.append validation + serialization + write) ${secs(r.keel).toFixed(2)} s -> ratio ${ratio(r.keel, r.raw)}`,
  )
}

async function loadPhase(store: PostgresStore, client: pg.Client, table: string, id: string, events: number) {
  const best = { load: 0n, read: 0n, select: 0n, parse: 0n }
  const keep = (key: keyof typeof best, value: bigint) => {
    if (best[key] === 0n || value < best[key]) best[key] = value
  }
  const rawQuery = () =>
    client.query<{ seq: number; line: string }>(
      `SELECT seq, line FROM ${table} WHERE session_id = $1 ORDER BY seq`,
      [id],
    )
  for (let i = 0; i < 5; i++) {
    const [load, loaded] = await timed(() => store.load(id))
    if (loaded.nextSeq !== events) throw new Error('postgres load lost events')
    const [read] = await timed(async () => [...(await store.backend.read(id)).events].length)
    const [select, rows] = await timed(async () => (await rawQuery()).rows)
    if (rows.length !== events) throw new Error(`raw select found ${rows.length} rows, not ${events}`)
    const [parse] = await timed(async () =>
      (await rawQuery()).rows.map((row) => JSON.parse(row.line) as unknown),
    )
    keep('load', load)
    keep('read', read)
    keep('select', select)
    keep('parse', parse)
  }
  console.log(
    `postgres load of ${events} events (best of 5): raw SELECT of the same rows ${secs(best.select).toFixed(2)} s; raw SELECT + JSON.parse of each line ${secs(best.parse).toFixed(2)} s`,
  )
  console.log(
    `  keel store read (rows fetched and parsed, header and event_count checked) ${secs(best.read).toFixed(2)} s -> ratio ${ratio(best.read, best.select)} to SELECT, ${ratio(best.read, best.parse)} to SELECT + JSON.parse (goal <= 1.3x)`,
  )
  console.log(
    `  keel load (read + validation of every event into a Session) ${secs(best.load).toFixed(2)} s -> ratio ${ratio(best.load, best.select)} to SELECT, ${ratio(best.load, best.parse)} to SELECT + JSON.parse`,
  )
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
    await store.list() // creates the schema
    await client.query(
      `CREATE TABLE ${table} (session_id text NOT NULL, seq integer NOT NULL, line text NOT NULL, PRIMARY KEY (session_id, seq))`,
    )
    const big = await appendPhase(
      store,
      client,
      table,
      'big',
      Math.ceil(100_000 / SAMPLE_TURN_EVENTS),
      100,
      2,
    )
    printAppend(`${100 * SAMPLE_TURN_EVENTS} events per transaction`, big)
    const small = await appendPhase(store, client, table, 'small', 600, 1, 100)
    printAppend(`${SAMPLE_TURN_EVENTS} events per transaction`, small)
    await loadPhase(store, client, table, 'big', Math.ceil(100_000 / SAMPLE_TURN_EVENTS) * SAMPLE_TURN_EVENTS)
  } finally {
    await store.close()
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await client.end()
  }
}
