// Child process of `verify`: imports the packages of a repository — running their code, as a
// session's host would — and prints the migration steps that ended up in the session module's
// SESSION_MIGRATIONS registry. A `registerMigration` in a file nothing imports, or one that
// merely mentions the name, does not count.
// argv: <session entry> <entry to import>...   stdout: JSON [{ "from": n, "to": m }, ...]
import { pathToFileURL } from 'node:url'

const [sessionEntry, ...entries] = process.argv.slice(2)
if (!sessionEntry) {
  process.stderr.write('usage: migrations-probe <session entry> <entry>...\n')
  process.exit(2)
}
for (const entry of entries) await import(pathToFileURL(entry).href)
const session = (await import(pathToFileURL(sessionEntry).href)) as {
  SESSION_MIGRATIONS?: ReadonlyMap<number, { from: number; to: number }>
}
const registry = session.SESSION_MIGRATIONS
if (!(registry instanceof Map)) {
  process.stderr.write('the session module exports no SESSION_MIGRATIONS registry (a Map)\n')
  process.exit(3)
}
process.stdout.write(
  JSON.stringify(
    [...registry.values()].map((m) => ({ from: m.from, to: m.to })).sort((a, b) => a.from - b.from),
  ),
)
