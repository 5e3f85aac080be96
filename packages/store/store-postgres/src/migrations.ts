/** What {@link migrate} runs statements on: a `pg` client, or anything with its `query`. */
export interface MigrationClient {
  query(text: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>
}

/**
 * The schema migrations of the PostgreSQL store, applied in order on first use and
 * recorded in `<schema>.keel_migrations`. Append new versions; never edit an applied one.
 */
export const MIGRATIONS: ReadonlyArray<{
  version: number
  description: string
  sql: (schema: string) => string
}> = [
  {
    version: 1,
    description: 'sessions and events tables',
    sql: (s) => `
      CREATE TABLE ${s}.sessions (
        id text PRIMARY KEY,
        format_version integer NOT NULL,
        header jsonb NOT NULL,
        created_at double precision NOT NULL,
        cwd text,
        event_count integer NOT NULL DEFAULT 0,
        writer jsonb
      );
      CREATE INDEX sessions_created_at ON ${s}.sessions (created_at DESC);
      CREATE INDEX sessions_cwd_created_at ON ${s}.sessions (cwd, created_at DESC);
      CREATE TABLE ${s}.events (
        session_id text NOT NULL REFERENCES ${s}.sessions (id) ON DELETE CASCADE,
        seq integer NOT NULL,
        type text NOT NULL,
        time double precision NOT NULL,
        payload jsonb NOT NULL,
        envelope jsonb,
        PRIMARY KEY (session_id, seq)
      );`,
  },
  {
    version: 2,
    description:
      'exact JSON text (header_json, line) instead of jsonb, existing rows converted; writer lease with fencing token; blobs table; rows of a deleted session removed by a statement trigger instead of a per-row foreign key',
    sql: (s) => `
      ALTER TABLE ${s}.sessions
        ADD COLUMN header_json text,
        ALTER COLUMN header DROP NOT NULL,
        ADD COLUMN lease_token integer NOT NULL DEFAULT 0,
        ADD COLUMN lease_expires timestamptz;
      ALTER TABLE ${s}.events
        ADD COLUMN line text,
        ALTER COLUMN type DROP NOT NULL,
        ALTER COLUMN time DROP NOT NULL,
        ALTER COLUMN payload DROP NOT NULL;
      ALTER TABLE ${s}.events DROP CONSTRAINT IF EXISTS events_session_id_fkey;
      CREATE TABLE ${s}.blobs (
        session_id text NOT NULL,
        sha256 text NOT NULL,
        json text NOT NULL,
        PRIMARY KEY (session_id, sha256)
      );
      UPDATE ${s}.sessions SET header_json = header::text;
      UPDATE ${s}.events SET line = (
        jsonb_build_object('type', type, 'seq', seq, 'time', time, 'data', payload) || coalesce(envelope, '{}'::jsonb)
      )::text;
      ALTER TABLE ${s}.sessions ALTER COLUMN header_json SET NOT NULL;
      ALTER TABLE ${s}.events ALTER COLUMN line SET NOT NULL;
      CREATE FUNCTION ${s}.keel_delete_session_rows() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM ${s}.events e USING deleted d WHERE e.session_id = d.id;
        DELETE FROM ${s}.blobs b USING deleted d WHERE b.session_id = d.id;
        RETURN NULL;
      END $$;
      CREATE TRIGGER sessions_delete_rows AFTER DELETE ON ${s}.sessions
        REFERENCING OLD TABLE AS deleted FOR EACH STATEMENT
        EXECUTE FUNCTION ${s}.keel_delete_session_rows();`,
  },
  {
    version: 3,
    description:
      'last_event_at: the time of the last stored event (created_at while there is none), kept by every write, so sessions list by last activity',
    sql: (s) => `
      ALTER TABLE ${s}.sessions ADD COLUMN last_event_at double precision;
      UPDATE ${s}.sessions AS x SET last_event_at = greatest(x.created_at, coalesce((
        SELECT (e.line::jsonb ->> 'time')::double precision FROM ${s}.events e
         WHERE e.session_id = x.id ORDER BY e.seq DESC LIMIT 1), x.created_at));
      ALTER TABLE ${s}.sessions ALTER COLUMN last_event_at SET NOT NULL;
      CREATE INDEX sessions_last_event_at ON ${s}.sessions (last_event_at DESC);
      CREATE INDEX sessions_cwd_last_event_at ON ${s}.sessions (cwd, last_event_at DESC);`,
  },
  {
    version: 4,
    description:
      'integrity records (marks: a CRC-32 per range of lines and a SHA-256 chain) and checkpoints (the folded session state at a seq); both removed with their session',
    sql: (s) => `
      CREATE TABLE ${s}.marks (
        session_id text NOT NULL,
        next integer NOT NULL,
        seq integer NOT NULL,
        crc bigint NOT NULL,
        chain text NOT NULL,
        PRIMARY KEY (session_id, next)
      );
      CREATE TABLE ${s}.checkpoints (
        session_id text NOT NULL,
        seq integer NOT NULL,
        body text NOT NULL,
        PRIMARY KEY (session_id, seq)
      );
      CREATE OR REPLACE FUNCTION ${s}.keel_delete_session_rows() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        DELETE FROM ${s}.events e USING deleted d WHERE e.session_id = d.id;
        DELETE FROM ${s}.blobs b USING deleted d WHERE b.session_id = d.id;
        DELETE FROM ${s}.marks m USING deleted d WHERE m.session_id = d.id;
        DELETE FROM ${s}.checkpoints c USING deleted d WHERE c.session_id = d.id;
        RETURN NULL;
      END $$;`,
  },
]

/** Quotes a schema name after checking it is a plain identifier. */
export function quoteSchema(schema: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(schema)) {
    throw new Error(
      `PostgreSQL schema name ${JSON.stringify(schema)} must match [a-z_][a-z0-9_]* (at most 63 chars)`,
    )
  }
  return `"${schema}"`
}

/** Creates the schema and applies every missing migration, serialized by an advisory lock. */
export async function migrate(client: MigrationClient, schema: string): Promise<void> {
  const s = quoteSchema(schema)
  await client.query('BEGIN')
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`keel-migrate:${schema}`])
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`)
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${s}.keel_migrations (version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
    )
    const { rows } = await client.query(`SELECT max(version) AS v FROM ${s}.keel_migrations`)
    const current = (rows[0]?.v as number | null | undefined) ?? 0
    for (const m of MIGRATIONS) {
      if (m.version <= current) continue
      await client.query(m.sql(s))
      await client.query(`INSERT INTO ${s}.keel_migrations (version, description) VALUES ($1, $2)`, [
        m.version,
        m.description,
      ])
    }
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    throw error
  }
}
