// The PostgreSQL part of `pnpm bench storage` (called by storage.bench.ts): batched append
// and load of ~100k events, each against a raw baseline measured in the same run:
//   append  baseline: a plain INSERT of the same lines (serialized before timing), sent as
//           Keel sends them — one newline-joined text parameter split by string_to_array —
//           into a table of the same shape (primary key (session_id, seq), text line),
//           alternating batch by batch (Keel's statement also guards seq and lease and
//           writes its integrity record);
//   load    a full load without the checkpoint (every row read, records' CRCs checked,
//           folded into a Session) against a `SELECT` of the same rows plus `JSON.parse`
//           of each line; and the load from the checkpoint for comparison.
import type { Session } from '@keel/session'
import { MemoryStore } from '@keel/store'
import { PostgresStore } from '@keel/store-postgres'
import { appendSampleTurn, SAMPLE_TURN_EVENTS } from '@keel/store-testkit'
import pg from 'pg'
import type { Goal } from './goals.js'

const secs = (ns: bigint) => Number(ns) / 1e9
const ratio = (a: bigint, b: bigint) => `${(Number(a) / Number(b)).toFixed(2)}x`
const PAD = 'z'.repeat(120)

async function timed<T>(run: () => Promise<T>): Promise<[bigint, T]> {
  const t0 = process.hrtime.bigint()
  const value = await run()
  return [process.hrtime.bigint() - t0, value]
}

/**
 * Sample turn `i` of the benchmark session, and after every 50th a compaction that replaces
 * all but the first and the latest 400 surface nodes with a summary (as @keel/compaction
 * does): the surface, and so the checkpoints, stay bounded as in a real long session.
 */
function benchTurn(session: Session, i: number): void {
  appendSampleTurn(session, PAD)
  if (i % 50 !== 49) return
  const surface = session.surfaceSeqs()
  const shadowed = surface.slice(1, surface.length - 400)
  if (shadowed.length === 0) return
  session.append(
    'user/message',
    {
      message: { role: 'user', content: [{ type: 'text', text: `summary up to turn ${i}` }] },
      source: 'compaction',
    },
    {
      surfaceOp: { op: 'replace', startSeq: shadowed[0]!, endSeq: shadowed.at(-1)! },
      sourceEventSeqs: shadowed,
    },
  )
}

/**
 * The lines of `turns` benchmark turns, serialized before any timing (the baseline pays no
 * stringify), and the seq each turn starts at.
 */
async function templateLines(turns: number): Promise<{ lines: string[]; starts: number[] }> {
  const memory = new MemoryStore()
  const handle = await memory.create({ id: 'template' })
  const starts: number[] = []
  for (let i = 0; i < turns; i++) {
    starts.push(handle.session.nextSeq)
    benchTurn(handle.session, i)
  }
  starts.push(handle.session.nextSeq)
  await handle.close()
  return { lines: handle.session.events.map((e) => JSON.stringify(e)), starts }
}

interface AppendResult {
  /** Events measured (after the warm-up), and in the session. */
  events: number
  total: number
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
  const { lines, starts } = await templateLines(turns)
  const handle = await store.create({ id })
  const session: Session = handle.session
  const result: AppendResult = { events: 0, total: lines.length, keel: 0n, keelFlush: 0n, raw: 0n }
  let batch = 0
  for (let done = 0; done < turns; batch++) {
    const n = Math.min(perBatch, turns - done)
    const from = starts[done]!
    const to = starts[done + n]!
    const keelBatch = async () => {
      const t0 = process.hrtime.bigint()
      for (let i = done; i < done + n; i++) benchTurn(session, i)
      const f0 = process.hrtime.bigint()
      await handle.flush()
      const t1 = process.hrtime.bigint()
      return [t1 - t0, t1 - f0] as const
    }
    const rawBatch = async () => {
      const joined = lines.slice(from, to).join('\n')
      const [r] = await timed(() =>
        client.query(
          `INSERT INTO ${table} (session_id, seq, line)
           SELECT $1, $2::integer + x.n::integer - 1, x.line
             FROM unnest(string_to_array($3::text, E'\\n')) WITH ORDINALITY AS x(line, n)`,
          [id, from, joined],
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
      result.events += to - from
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
    `postgres append, ${label}: ${r.events} events measured (alternating with the baseline); raw INSERT of the same lines (same encoding) ${secs(r.raw).toFixed(2)} s`,
  )
  console.log(
    `  keel flush() only (the store's write path: one guarded statement per batch) ${secs(r.keelFlush).toFixed(2)} s = ${Math.round(r.events / secs(r.keelFlush))} events/s -> ratio ${ratio(r.keelFlush, r.raw)}`,
  )
  console.log(
    `  keel end to end (session.append validation + serialization + write) ${secs(r.keel).toFixed(2)} s -> ratio ${ratio(r.keel, r.raw)}`,
  )
}

async function loadPhase(
  url: string,
  schema: string,
  client: pg.Client,
  table: string,
  id: string,
  events: number,
) {
  const full = new PostgresStore({ url, schema, checkpoints: false })
  const resuming = new PostgresStore({ url, schema })
  const best = { load: 0n, resume: 0n, select: 0n, parse: 0n }
  const keep = (key: keyof typeof best, value: bigint) => {
    if (best[key] === 0n || value < best[key]) best[key] = value
  }
  const rawQuery = () =>
    client.query<{ seq: number; line: string }>(
      `SELECT seq, line FROM ${table} WHERE session_id = $1 ORDER BY seq`,
      [id],
    )
  try {
    for (let i = 0; i < 5; i++) {
      const [load, loaded] = await timed(() => full.load(id))
      if (loaded.nextSeq !== events || loaded.residentFrom !== 0) throw new Error('postgres load lost events')
      const [resume, resumed] = await timed(() => resuming.load(id))
      if (resumed.residentFrom !== events) throw new Error('postgres load did not start from its checkpoint')
      const [select, rows] = await timed(async () => (await rawQuery()).rows)
      if (rows.length !== events) throw new Error(`raw select found ${rows.length} rows, not ${events}`)
      const [parse] = await timed(async () =>
        (await rawQuery()).rows.map((row) => JSON.parse(row.line) as unknown),
      )
      keep('load', load)
      keep('resume', resume)
      keep('select', select)
      keep('parse', parse)
    }
  } finally {
    await full.close()
    await resuming.close()
  }
  console.log(
    `postgres load of ${events} events (best of 5): raw SELECT of the same rows ${secs(best.select).toFixed(2)} s; SELECT + JSON.parse of each line ${secs(best.parse).toFixed(2)} s`,
  )
  console.log(
    `  keel full load (rows read, integrity records checked, folded into a Session; no checkpoint) ${secs(best.load).toFixed(2)} s -> ${ratio(best.load, best.parse)} SELECT + JSON.parse`,
  )
  console.log(`  keel load from the checkpoint ${(secs(best.resume) * 1000).toFixed(0)} ms`)
  return Number(best.load) / Number(best.parse)
}

export async function postgresBench(): Promise<Goal[]> {
  const url = process.env.KEEL_PG_URL
  if (!url) {
    console.log(
      'postgres: skipped (KEEL_PG_URL is not set; as root, `source scripts/ci/start-postgres.sh` sets it)',
    )
    return []
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
    printAppend(`100 turns (about ${100 * SAMPLE_TURN_EVENTS} events) per transaction`, big)
    const small = await appendPhase(store, client, table, 'small', 600, 1, 100)
    printAppend(`one turn (about ${SAMPLE_TURN_EVENTS} events) per transaction`, small)
    const load = await loadPhase(url, schema, client, table, 'big', big.total)
    return [{ name: 'postgres full load / SELECT + JSON.parse', value: load, limit: 1.3 }]
  } finally {
    await store.close()
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await client.end()
  }
}
