// `pnpm gen-persistence-catalog [--snapshot [--force]] [--record "note"] [--dry-run] [--translation-hash <event|path#Type>] [--root DIR] [--time]`
// `pnpm verify-persistence-catalog [--root DIR] [--time]`
// `pnpm gen-persistence-catalog --package DIR` / `pnpm verify-persistence-catalog --package DIR`:
// a plugin package outside the repository (see outside.ts).
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { errorMessage } from '@keel/base'
import { CatalogError } from './errors.js'
import { generateCatalog, type HistoryOptions } from './generate.js'
import { goldenJobs } from './history.js'
import { generateOutside } from './outside.js'
import { generateAndWrite, SnapshotRefused } from './release.js'
import { declaringPackages, startRuntimeReport } from './runtime.js'
import { readSnapshots } from './snapshots.js'
import { translationHash } from './translations.js'
import { verifyCatalog } from './verify.js'
import { findPackages, loadProject } from './workspace.js'

/** The module declaring SessionEventMap (the library's default). */
const SESSION_MODULE = '@keel/session'

interface Args {
  command: string
  root: string
  snapshot: boolean
  dryRun: boolean
  translationHash?: string
  force: boolean
  record?: string
  time: boolean
  /** `--package` directories (absolute), relative ones taken from where pnpm was started. */
  packages: string[]
}

const USAGE = `usage:
  tsx scripts/catalog/cli.ts generate [--snapshot [--force]] [--record "why it changed"] [--dry-run] [--root DIR] [--time]
  tsx scripts/catalog/cli.ts generate --translation-hash <event type | path#Type> [--root DIR]
  tsx scripts/catalog/cli.ts verify [--root DIR] [--time]
  tsx scripts/catalog/cli.ts generate|verify --package DIR   (a plugin package outside the repository)`

function parseArgs(argv: string[]): Args {
  const here = fileURLToPath(new URL('.', import.meta.url))
  const args: Args = {
    command: argv[0] ?? '',
    root: resolve(here, '../..'),
    snapshot: false,
    dryRun: false,
    force: false,
    time: false,
    packages: [],
  }
  const from = process.env.INIT_CWD ?? process.cwd()
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!
    if (a === '--') continue
    if (a === '--snapshot') args.snapshot = true
    else if (a === '--dry-run') args.dryRun = true
    else if (a === '--force') args.force = true
    else if (a === '--time') args.time = true
    else if (a === '--record') {
      const note = argv[++i]
      if (note === undefined || note.startsWith('--'))
        throw new Error('--record needs a note: --record "why it changed"')
      args.record = note
    } else if (a.startsWith('--record=')) args.record = a.slice('--record='.length)
    else if (a === '--translation-hash') {
      const what = argv[++i]
      if (what === undefined || what.startsWith('--'))
        throw new Error('--translation-hash needs an event type or a type: --translation-hash todo/write')
      args.translationHash = what
    } else if (a === '--package') {
      const dir = argv[++i]
      if (dir === undefined || dir.startsWith('--'))
        throw new Error('--package needs the directory of a plugin package: --package ../notes')
      args.packages.push(resolve(from, dir))
    } else if (a === '--root') args.root = resolve(argv[++i] ?? '.')
    else throw new Error(`unknown argument ${a}\n${USAGE}`)
  }
  return args
}

async function main(): Promise<number> {
  let args: Args
  try {
    args = parseArgs(process.argv.slice(2))
  } catch (e) {
    console.error(errorMessage(e))
    return 2
  }
  // Process start to here: node, tsx and loading the TypeScript compiler.
  const startup = process.uptime()
  const t0 = performance.now()
  // Verify loads every golden log in a child process: start it now, so it runs while this
  // process loads the sources (its inputs are read from the files as text).
  if (args.packages.length > 0) return outside(args)
  const early = args.command === 'verify' ? startEarly(args.root) : undefined
  const loaded = loadProject(args.root)
  const t1 = performance.now()
  if (args.time) loaded.project.getProgram().compilerObject.getTypeChecker()
  const t2 = performance.now()
  const timing = () => {
    if (!args.time) return
    const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`
    const total = performance.now() - t0
    console.error(
      `(${args.command} took ${s(total)} after a process start of ${s(startup * 1000)}: load sources ${s(t1 - t0)}, create program ${s(t2 - t1)}, catalog ${s(total - (t2 - t0))})`,
    )
  }
  if (args.command === 'verify') {
    const result = verifyCatalog({ root: args.root, loaded, ...(early ? { early: await early } : {}) })
    for (const m of result.messages) (result.ok ? console.log : console.error)(m)
    timing()
    return result.ok ? 0 : 1
  }
  if (args.command !== 'generate') {
    console.error(USAGE)
    return 2
  }
  try {
    if (args.translationHash !== undefined) {
      const gen = generateCatalog({ root: args.root, loaded })
      const { key, hash } = translationHash(gen.model, args.translationHash)
      console.log(hash)
      console.error(
        `(the "source" a translation of ${key} in docs/persistence/translations.zh.json must carry)`,
      )
      return 0
    }
    const { lines, history } = generateAndWrite({
      root: args.root,
      loaded,
      snapshot: args.snapshot,
      force: args.force,
      record: args.record,
      dryRun: args.dryRun,
    })
    for (const l of lines) console.log(l)
    const pending = [...history.problems, ...(history.snapshotDue ? [history.snapshotDue] : [])]
    if (pending.length > 0) {
      console.log('\nverify will still fail until the format history is settled:')
      for (const p of pending) console.log(`  ${p}`)
    }
    timing()
    return 0
  } catch (e) {
    if (e instanceof CatalogError) {
      console.error('The persistence catalog cannot be generated:')
      for (const p of e.problems) console.error(`  ${p.message}`)
      return 1
    }
    if (e instanceof SnapshotRefused) {
      console.error(e.message)
      return 1
    }
    console.error(errorMessage(e))
    return 1
  }
}

/** `generate|verify --package DIR`: only the outside packages' files; no repository history. */
function outside(args: Args): number {
  if (args.command !== 'generate' && args.command !== 'verify') {
    console.error(USAGE)
    return 2
  }
  if (args.snapshot || args.record !== undefined || args.translationHash !== undefined || args.force) {
    console.error(
      "--package generates a package's validators only: --snapshot, --record, --force and --translation-hash are for the repository",
    )
    return 2
  }
  try {
    const loaded = loadProject(args.root, { outside: args.packages })
    const result = generateOutside(args.root, loaded, args.command === 'verify' || args.dryRun)
    for (const l of result.lines) (result.failed.length > 0 ? console.error : console.log)(l)
    return result.failed.length > 0 ? 1 : 0
  } catch (e) {
    if (e instanceof CatalogError) {
      console.error('The validators cannot be generated:')
      for (const p of e.problems) console.error(`  ${p.message}`)
      return 1
    }
    console.error((e as Error).message)
    return 1
  }
}

/** The runtime report verify will need, started in the background. */
function startEarly(root: string): Promise<NonNullable<HistoryOptions['early']>> {
  const packages = findPackages(root)
  const job = {
    owners: declaringPackages(root, packages, SESSION_MODULE),
    goldens: goldenJobs(root, readSnapshots(root)),
  }
  return startRuntimeReport(root, packages, SESSION_MODULE, job).then((report) => ({ job, report }))
}

process.exitCode = await main()
