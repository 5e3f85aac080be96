import { constants, promises as fs } from 'node:fs'
import { dirname, join } from 'node:path'
import { KeelError } from '@keel/base'
import type { SessionStore } from '@keel/store'
import { JsonlStore, keelHome } from '@keel/store-jsonl'
import { parseFlags, UsageError } from './usage.js'

/** The storage backends the command line can select. */
export type StoreKind = 'jsonl' | 'postgres'

/** A `--store` (or `KEEL_STORE`) value that names no backend, or `postgres` without `KEEL_PG_URL`. */
export class StoreKindInvalid extends KeelError<'STORE_KIND_INVALID' | 'KEEL_PG_URL_MISSING'> {}

/** `KEEL_HOME` cannot hold sessions: it is a file, or it (or its `sessions/`) cannot be written. */
export class KeelHomeUnusable extends KeelError<'KEEL_HOME_UNUSABLE'> {}

function homeName(home: string, env: Readonly<Record<string, string | undefined>>): string {
  return env.KEEL_HOME ? `KEEL_HOME ${home}` : `the Keel home ${home} (KEEL_HOME is unset)`
}

/**
 * Checks, before anything is read or written, that the Keel home can serve: it is a
 * directory (or does not exist yet), and for `write` that sessions can be created in it
 * (its `sessions/` or, when that is missing, the nearest existing parent is writable).
 * Writes nothing. Throws {@link KeelHomeUnusable} naming the path.
 */
export async function checkKeelHome(
  home: string,
  env: Readonly<Record<string, string | undefined>>,
  mode: 'read' | 'write',
): Promise<void> {
  const name = homeName(home, env)
  const fail = (why: string, path: string) => {
    throw new KeelHomeUnusable('KEEL_HOME_UNUSABLE', `${name} ${why}`, { path })
  }
  for (const path of [home, join(home, 'sessions'), join(home, 'presets')]) {
    const stat = await fs.stat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined
      if (error.code === 'ENOTDIR') return fail('is not a directory (a file is in the way)', path)
      return fail(`cannot be read: ${error.code ?? error.message} on ${path}`, path)
    })
    if (stat && !stat.isDirectory())
      fail(
        path === home ? 'is a file, not a directory' : `has a file where the directory ${path} belongs`,
        path,
      )
  }
  if (mode === 'read') return
  let target = join(home, 'sessions')
  while (!(await fs.stat(target).catch(() => undefined))) {
    const parent = dirname(target)
    if (parent === target) break
    target = parent
  }
  try {
    await fs.access(target, constants.W_OK | constants.X_OK)
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    const why = code === 'EROFS' ? 'is on a read-only file system' : `is not writable (${code ?? 'denied'})`
    fail(`cannot hold new sessions: ${target} ${why}`, target)
  }
}

/** A store chosen on the command line, with what the CLI needs to say where things went. */
export interface SelectedStore {
  readonly kind: StoreKind
  readonly store: SessionStore
  /** Where sessions live, for people (`/home/me/.keel`, `PostgreSQL schema keel`). */
  readonly where: string
  /** Where one session's log is, for people. */
  logOf(id: string): string
  /** The folder a session's files go in, for backends that keep one (JSONL). */
  directoryOf?: (id: string) => string
}

/**
 * Resolves the store: `--store` wins, then `$KEEL_STORE`, then the embedded JSONL default.
 * `postgres` connects with `$KEEL_PG_URL` (a missing URL is the store's typed error); its
 * driver is imported only then.
 */
export async function selectStore(
  flag: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  home?: string,
): Promise<SelectedStore> {
  const kind = flag ?? (env.KEEL_STORE && env.KEEL_STORE !== '' ? env.KEEL_STORE : 'jsonl')
  if (kind === 'jsonl') {
    const root = home ?? keelHome(env as NodeJS.ProcessEnv)
    const store = new JsonlStore({ home: root })
    return {
      kind,
      store,
      where: root,
      logOf: (id) => store.fileOf(id),
      directoryOf: (id) => join(store.sessionsDir, id),
    }
  }
  if (kind === 'postgres') {
    const url = env.KEEL_PG_URL?.trim()
    if (!url) {
      throw new StoreKindInvalid(
        'KEEL_PG_URL_MISSING',
        `the postgres store (from ${flag !== undefined ? '--store' : '$KEEL_STORE'}) needs a database: set KEEL_PG_URL, e.g. postgres://user:password@127.0.0.1:5432/keel`,
        { kind },
      )
    }
    const schema = env.KEEL_PG_SCHEMA?.trim() || 'keel'
    const { PostgresStore } = await import('@keel/store-postgres')
    const store = new PostgresStore({ url, schema })
    return {
      kind,
      store,
      where: `PostgreSQL ($KEEL_PG_URL), schema ${schema}`,
      logOf: (id) => `PostgreSQL table ${schema}.events, session_id = '${id}'`,
    }
  }
  throw new StoreKindInvalid(
    'STORE_KIND_INVALID',
    `unknown store ${JSON.stringify(kind)} (from ${flag !== undefined ? '--store' : '$KEEL_STORE'}): use jsonl (the default) or postgres`,
    { kind },
  )
}

/**
 * `keel sessions unlock <id>`: removes a JSONL session's writer lock that this host cannot
 * judge (held on another host) or that is stale or unreadable. A lock of a live process on
 * this host is refused (`SESSION_LOCKED`): close the session there instead.
 */
export async function unlockSession(
  argv: readonly string[],
  io: { env: Readonly<Record<string, string | undefined>>; out(text: string): void; err(text: string): void },
): Promise<number> {
  const { values, positionals } = parseFlags('keel sessions unlock', argv, { store: { type: 'string' } })
  const id = positionals[0]
  if (id === undefined || positionals.length > 1)
    throw new UsageError('keel sessions unlock needs one session id: keel sessions unlock <id>')
  const selected = await selectStore(values.store, io.env)
  try {
    if (!(selected.store instanceof JsonlStore)) {
      io.err(
        `keel sessions unlock: the ${selected.kind} store keeps no writer lock files; nothing to unlock\n`,
      )
      return 2
    }
    const result = await selected.store.unlock(id)
    if (!result.removed) {
      io.out(`session ${id} has no writer lock; nothing to do\n`)
      return 0
    }
    const holder = result.holder
    const who =
      holder === 'unreadable'
        ? 'an unreadable lock'
        : `the lock of process ${holder.pid} on ${holder.host}${holder.since ? ` (taken ${new Date(holder.since).toISOString()})` : ''}`
    io.out(`session ${id}: removed ${who}; it can be opened again\n`)
    return 0
  } finally {
    await selected.store.close()
  }
}
