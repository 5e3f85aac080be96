// The baseline of load.bench.ts: what an application using the raw `openai` client does for
// the same conversation — stream the same request bodies, accumulate the answer's text and
// tool-call arguments, and persist the same bytes at the same flush points as Keel's store
// (before each model call, and at the end of the turn): the events' JSON lines, serialized
// at the flush (as an application would), appended to memory, to a file with `fsync`, or
// to PostgreSQL in one insert per batch.
import { mkdir, open } from 'node:fs/promises'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import type OpenAI from 'openai'
import pg from 'pg'

/** One session's worth of a turn, as Keel sent and stored it (the template the raw side replays). */
export interface TurnTemplate {
  /** The request bodies of the turn's model calls, in order. */
  bodies: unknown[]
  /** The stored events of the turn, cut at the flush points ({@link flushBatches}): a batch that ends with `step/start` is flushed before the next model call. */
  batches: unknown[][]
}

/** Where the raw side persists: one implementation per store kind. */
export interface RawSink {
  create(id: string, header: string): Promise<RawLog>
  close(): Promise<void>
}

export interface RawLog {
  append(lines: string[]): Promise<void>
  close(): Promise<void>
}

/**
 * Cuts a session's events into its flush batches, as the agent flushes: after each
 * `step/start` (before the model call), after a step's last `tool/call` (before its tools
 * run) and after each `turn/end`.
 */
export function flushBatches(events: readonly { type: string }[]): unknown[][] {
  const batches: unknown[][] = []
  let current: unknown[] = []
  for (const [i, event] of events.entries()) {
    current.push(event)
    const lastCall = event.type === 'tool/call' && events[i + 1]?.type !== 'tool/call'
    if (event.type === 'step/start' || lastCall || event.type === 'turn/end') {
      batches.push(current)
      current = []
    }
  }
  if (current.length > 0) batches.push(current)
  return batches
}

export function memorySink(): RawSink {
  return {
    async create() {
      const lines: string[] = []
      return {
        async append(batch) {
          for (const line of batch) lines.push(line)
        },
        async close() {},
      }
    },
    async close() {},
  }
}

/** One file per session, `<dir>/<id>/session.jsonl`: header line, then each batch written and fsynced. */
export function jsonlSink(dir: string): RawSink {
  return {
    async create(id, header) {
      const folder = join(dir, id)
      await mkdir(folder, { recursive: true })
      const file = await open(join(folder, 'session.jsonl'), 'a')
      await file.write(`${header}\n`)
      await file.sync()
      return {
        async append(batch) {
          await file.write(`${batch.join('\n')}\n`)
          await file.sync()
        },
        close: () => file.close(),
      }
    },
    async close() {},
  }
}

/** A table of the store's shape in its own schema; each batch one `unnest` insert on a pool of `poolSize`. */
export async function postgresSink(url: string, schema: string, poolSize: number): Promise<RawSink> {
  const pool = new pg.Pool({ connectionString: url, max: poolSize })
  await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`)
  await pool.query(
    `CREATE TABLE IF NOT EXISTS ${schema}.sessions (id text PRIMARY KEY, header_json text NOT NULL, event_count integer NOT NULL DEFAULT 0)`,
  )
  await pool.query(
    `CREATE TABLE IF NOT EXISTS ${schema}.events (session_id text NOT NULL, seq integer NOT NULL, line text NOT NULL, PRIMARY KEY (session_id, seq))`,
  )
  return {
    async create(id, header) {
      await pool.query(`INSERT INTO ${schema}.sessions (id, header_json) VALUES ($1, $2)`, [id, header])
      let next = 0
      return {
        async append(batch) {
          const seqs = batch.map((_, i) => next + i)
          next += batch.length
          await pool.query(
            `INSERT INTO ${schema}.events (session_id, seq, line) SELECT $1, * FROM unnest($2::integer[], $3::text[])`,
            [id, seqs, batch],
          )
        },
        async close() {},
      }
    },
    async close() {
      await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
      await pool.end()
    },
  }
}

/** Streams one request with the raw client, accumulating what an application keeps. */
async function streamOnce(raw: OpenAI, body: unknown): Promise<number> {
  const stream = await raw.chat.completions.create({
    ...(body as OpenAI.ChatCompletionCreateParamsStreaming),
    stream: true,
  })
  let text = ''
  let args = ''
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta
    if (delta?.content) text += delta.content
    for (const call of delta?.tool_calls ?? []) if (call.function?.arguments) args += call.function.arguments
  }
  return text.length + args.length
}

/**
 * One raw session: `turns` turns of the template, each flushing its batches (serialized now,
 * as an application would) at the agent's points: before each model call, once the call's
 * tool calls are known, and at the end. Returns each turn's latency.
 */
export async function rawSession(
  raw: OpenAI,
  sink: RawSink,
  id: string,
  header: unknown,
  turns: readonly TurnTemplate[],
): Promise<number[]> {
  const log = await sink.create(id, JSON.stringify(header))
  const latencies: number[] = []
  for (const turn of turns) {
    const t0 = performance.now()
    let call = 0
    for (const batch of turn.batches) {
      await log.append(batch.map((event) => JSON.stringify(event)))
      if ((batch.at(-1) as { type?: string } | undefined)?.type === 'step/start')
        await streamOnce(raw, turn.bodies[call++])
    }
    latencies.push(performance.now() - t0)
  }
  await log.close()
  return latencies
}
