// A throwaway format v2, end to end, in a temporary copy of the core packages: a breaking
// change is refused until the version is bumped, a migration registered (by code that runs)
// and the snapshot taken; then the frozen v1 golden log loads under v2 through the chain.
import { spawnSync } from 'node:child_process'
import {
  cpSync,
  existsSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

const repo = join(import.meta.dirname, '..', '..')
const cli = join(repo, 'scripts/catalog/cli.ts')
const root = mkdtempSync(join(tmpdir(), 'keel-format-v2-'))
afterAll(() => rmSync(root, { recursive: true, force: true }))

beforeAll(() => {
  for (const rel of ['packages/core/base', 'packages/core/session', 'packages/llm/llm']) {
    for (const part of ['package.json', 'tsconfig.json', 'src']) {
      cpSync(join(repo, rel, part), join(root, rel, part), { recursive: true })
    }
    const modules = join(repo, rel, 'node_modules')
    if (existsSync(modules)) symlinkSync(realpathSync(modules), join(root, rel, 'node_modules'), 'dir')
  }
  symlinkSync(join(repo, 'node_modules'), join(root, 'node_modules'), 'dir')
})

const run = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', cli, ...args, '--root', root], {
    encoding: 'utf8',
    cwd: repo,
  })
const edit = (rel: string, change: (t: string) => string) => {
  const abs = join(root, rel)
  const before = readFileSync(abs, 'utf8')
  const after = change(before)
  if (after === before) throw new Error(`edit of ${rel} changed nothing`)
  writeFileSync(abs, after)
}
const EVENTS = 'packages/core/session/src/events.ts'

describe('a throwaway format v2', () => {
  it('is refused until bumped and migrated, then old logs load through the chain', () => {
    expect(run('generate', '--snapshot').status).toBe(0)
    expect(existsSync(join(root, 'docs/persistence/golden/v1/session.jsonl'))).toBe(true)
    expect(run('verify').status).toBe(0)

    // A breaking change: turn/start gets a required label.
    edit(EVENTS, (t) =>
      t
        .replace(
          "  'turn/start': TurnRef\n",
          "  'turn/start': TurnRef & {\n    /** @minLength 1 */\n    label: string\n  }\n",
        )
        .replace(
          '@example {"turn":1}\n   */\n  \'turn/start\'',
          '@example {"turn":1,"label":"first"}\n   */\n  \'turn/start\'',
        ),
    )
    expect(run('generate', '--record', 'turns carry a label').status).toBe(0)
    const refused = run('verify')
    expect(refused.status).toBe(1)
    const record = JSON.parse(
      readFileSync(join(root, 'docs/persistence/changes/v1/turn__start.json'), 'utf8'),
    )
    expect(record).toMatchObject({ classification: 'breaking', note: 'turns carry a label' })
    expect(record.changes).toEqual(['turn/start: required property added: label'])
    expect(refused.stderr).toContain('set SESSION_FORMAT_VERSION to 2')

    // Bump, and a migration in a module nothing imports yet: still refused.
    edit('packages/core/session/src/types.ts', (t) =>
      t.replace('SESSION_FORMAT_VERSION = 1', 'SESSION_FORMAT_VERSION = 2'),
    )
    writeFileSync(
      join(root, 'packages/core/session/src/upgrade-v2.ts'),
      "import { registerMigration } from './migrations.js'\n\nregisterMigration({\n  from: 1,\n  to: 2,\n  owner: '@keel/session',\n  description: 'turn/start gets a label',\n  migrate: (e) => (e.type === 'turn/start' ? { ...e, data: { ...(e.data as object), label: 'turn ' + String((e.data as { turn: number }).turn) } } : e),\n})\n",
    )
    expect(run('generate', '--record', 'turns carry a label').status).toBe(0)
    expect(run('verify').stderr).toContain('no migration from format 1 to 2 is registered')
    edit('packages/core/session/src/index.ts', (t) => `import './upgrade-v2.js'\n${t}`)
    expect(run('generate', '--snapshot').status).toBe(0)
    const passed = run('verify')
    expect(passed.stderr + passed.stdout).toContain('up to date')
    expect(passed.status).toBe(0)
    expect(existsSync(join(root, 'docs/persistence/golden/v2/session.jsonl'))).toBe(true)

    // The frozen v1 golden log loads under v2 through the chain, and not without it.
    writeFileSync(
      join(root, 'check.ts'),
      `import { readFileSync } from 'node:fs'
import { migrateEvent, Session, SESSION_FORMAT_VERSION } from './packages/core/session/src/index.ts'
const [h, ...lines] = readFileSync('docs/persistence/golden/v1/session.jsonl', 'utf8').trim().split('\\n')
const header = JSON.parse(h)
const stored = lines.map((l) => JSON.parse(l))
let raw = 'loaded'
try { Session.create(header.id, { ...header, version: SESSION_FORMAT_VERSION }, stored) } catch (e) { raw = e.code }
const migrated = stored.flatMap((e) => migrateEvent(e, 1, SESSION_FORMAT_VERSION))
const s = Session.create(header.id, { ...header, version: SESSION_FORMAT_VERSION }, migrated)
const start = s.events.find((e) => e.type === 'turn/start')
console.log(JSON.stringify({ version: SESSION_FORMAT_VERSION, raw, events: s.nextSeq, label: start.data.label }))
`,
    )
    const check = spawnSync(process.execPath, ['--import', 'tsx', 'check.ts'], {
      encoding: 'utf8',
      cwd: root,
    })
    expect(check.status, check.stderr).toBe(0)
    expect(JSON.parse(check.stdout)).toEqual({
      version: 2,
      raw: 'EVENT_DATA_INVALID',
      events: 12,
      label: 'turn 1',
    })
  }, 300_000)
})
