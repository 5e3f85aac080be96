import type { IntegrityMark, PendingEvent } from '@keel/store'

/** One batch as statement parameters: the lines joined by newlines (JSON never holds a raw one). */
export interface BatchParams {
  lines: string
  count: number
  /** The time of the batch's last event (`null` for an empty batch). */
  lastTime: number | null
  blobShas: string[]
  blobJsons: string[]
}

export function batchParams(batch: readonly PendingEvent[]): BatchParams {
  const lines: string[] = new Array(batch.length)
  const blobShas: string[] = []
  const blobJsons: string[] = []
  const seen = new Set<string>()
  for (let i = 0; i < batch.length; i++) {
    const pending = batch[i]!
    lines[i] = pending.json
    const blob = pending.blob
    if (blob !== undefined && !seen.has(blob.sha256)) {
      seen.add(blob.sha256)
      blobShas.push(blob.sha256)
      blobJsons.push(blob.json)
    }
  }
  const lastTime = batch.length > 0 ? batch[batch.length - 1]!.event.time : null
  return { lines: lines.join('\n'), count: batch.length, lastTime, blobShas, blobJsons }
}

/** A batch's integrity record as statement parameters (all null without one). */
export function markParams(mark: IntegrityMark | undefined): (number | string | null)[] {
  return mark ? [mark.next, mark.seq, mark.crc, mark.chain] : [null, null, null, null]
}

/**
 * The rows of a batch, inserted from the session row `s` of the same statement: nothing
 * is inserted when `s` is empty (the guard of the statement did not match). Parameters:
 * `$2` first seq, `$6` lines, `$7` blob digests, `$8` blob texts; `$m`…`$m+3` the integrity
 * record (next, seq, crc, chain; null without one). `main` is the statement's own part, after
 * the others: `events` (the events' insert, its row count the batch's length when `s` matched,
 * else 0), `marks` (for a batch of no events: the integrity record's insert, 1 or 0), or
 * `ok` (a row `ok`, `s`'s row count). Every variant has every part, so each uses every parameter.
 */
function insertRows(schema: string, m: number, main: 'events' | 'marks' | 'ok'): string {
  const marks = `INSERT INTO ${schema}.marks (session_id, next, seq, crc, chain)
    SELECT s.id, $${m}::integer, $${m + 1}::integer, $${m + 2}::bigint, $${m + 3}::text FROM s
     WHERE $${m}::integer IS NOT NULL`
  const blobs = `INSERT INTO ${schema}.blobs (session_id, sha256, json)
    SELECT s.id, x.sha256, x.json FROM s, unnest($7::text[], $8::text[]) AS x(sha256, json)
    ON CONFLICT DO NOTHING`
  const events = `INSERT INTO ${schema}.events (session_id, seq, line)
    SELECT s.id, $2::integer + x.n::integer - 1, x.line
      FROM s, unnest(string_to_array(nullif($6::text, ''), E'\\n')) WITH ORDINALITY AS x(line, n)`
  if (main === 'events') return `r AS (${marks}), b AS (${blobs})\n  ${events}`
  if (main === 'marks') return `e AS (${events}), b AS (${blobs})\n  ${marks}`
  return `r AS (${marks}), b AS (${blobs}), e AS (${events})\n  SELECT count(*)::int AS ok FROM s`
}

/**
 * One statement (one transaction, one round trip) appending a batch: it bumps the
 * session's `event_count` only when it is `$2` (the batch's first seq) and the lease
 * token is `$3`, and inserts events and blobs only then. `$5` is the lease duration in ms
 * (renewed by the write); with `$9` false (a low-level append) the writer is cleared and
 * the token moves on, fencing out an expired holder. `$10`…`$13` the batch's integrity
 * record, `$14` the time of the batch's last event (`last_event_at`). It returns no rows:
 * its row count says whether the guard held — the batch's length for a batch of events
 * (`withEvents`), 1 for one of only an integrity record; 0 when refused.
 */
export function appendSql(schema: string, withEvents: boolean): string {
  return `WITH s AS (
    UPDATE ${schema}.sessions
       SET event_count = event_count + $4::integer,
           lease_expires = CASE WHEN $9::boolean THEN now() + $5::double precision * interval '1 millisecond' END,
           writer = CASE WHEN $9::boolean THEN writer END,
           lease_token = CASE WHEN $9::boolean THEN lease_token ELSE lease_token + 1 END,
           last_event_at = greatest(last_event_at, $14::double precision)
     WHERE id = $1 AND event_count = $2::integer AND lease_token = $3::integer
    RETURNING id
  ), ${insertRows(schema, 10, withEvents ? 'events' : 'marks')}`
}

/**
 * One statement creating a session with its writer lease and initial events; `ok` is 0
 * when the id exists. `$1` id, `$3` header text, `$4` created_at, `$5` cwd, `$9` writer,
 * `$10` lease ms, `$11` format version, `$12` event count, `$13`…`$16` the integrity record,
 * `$17` the last initial event's time.
 */
export function createSql(schema: string): string {
  return `WITH s AS (
    INSERT INTO ${schema}.sessions
      (id, format_version, header_json, created_at, cwd, event_count, writer, lease_token, lease_expires, last_event_at)
    VALUES ($1, $11::integer, $3, $4::double precision, $5, $12::integer, $9::jsonb, 1, now() + $10::double precision * interval '1 millisecond',
            greatest($4::double precision, coalesce($17::double precision, $4::double precision)))
    ON CONFLICT (id) DO NOTHING
    RETURNING id
  ), ${insertRows(schema, 13, 'ok')}`
}

/**
 * One statement storing the checkpoint at `$2` (text `$3`) in place of the others, and the
 * blobs of its spilled events (`$5` digests, `$6` texts), if the writer's lease token `$4`
 * still holds; `ok` is 0 otherwise.
 */
export function checkpointSql(schema: string): string {
  return `WITH s AS (SELECT id FROM ${schema}.sessions WHERE id = $1 AND lease_token = $4::integer),
    b AS (
      INSERT INTO ${schema}.blobs (session_id, sha256, json)
      SELECT s.id, x.sha256, x.json FROM s, unnest($5::text[], $6::text[]) AS x(sha256, json)
      ON CONFLICT DO NOTHING
    ),
    d AS (DELETE FROM ${schema}.checkpoints c USING s WHERE c.session_id = s.id AND c.seq <> $2::integer),
    i AS (
      INSERT INTO ${schema}.checkpoints (session_id, seq, body) SELECT s.id, $2::integer, $3 FROM s
      ON CONFLICT (session_id, seq) DO UPDATE SET body = excluded.body
    )
  SELECT count(*)::int AS ok FROM s`
}
