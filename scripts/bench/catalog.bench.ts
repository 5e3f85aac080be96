// `pnpm bench catalog`: how long the persistence catalog takes on the whole repository.
//
// Cold runs (a fresh `tsx` process each, as `pnpm gen-persistence-catalog` and the pre-stop
// hook run them): `generate --dry-run` (everything but the writes) and `verify`, against a
// cold baseline: a fresh process that loads ts-morph and creates the TypeScript program for
// the same files (catalog-baseline.ts), the part no generator can skip. Then one in-process
// run split into phases, each against the same work done in-process (warm against warm).
// Verify also loads every golden log in a child process (importing the packages); that
// phase is timed on its own.
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildMachineCatalog } from '../catalog/catalog-json.js'
import { generateCatalog, runtimeOf } from '../catalog/generate.js'
import { goldenPath } from '../catalog/golden.js'
import { buildModel } from '../catalog/model.js'
import { renderMarkdown } from '../catalog/render.js'
import { readSnapshots } from '../catalog/snapshots.js'
import { verifyCatalog } from '../catalog/verify.js'
import { loadProject } from '../catalog/workspace.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const cli = join(root, 'scripts', 'catalog', 'cli.ts')
const REPS = 3

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const time = (f: () => void) => {
  const t = performance.now()
  f()
  return performance.now() - t
}

function cold(args: string[]): number {
  const t = performance.now()
  const run = spawnSync(process.execPath, ['--import', 'tsx', cli, ...args], { cwd: root, encoding: 'utf8' })
  const ms = performance.now() - t
  if (run.status !== 0 && args[0] !== 'verify') throw new Error(`${args.join(' ')} failed:\n${run.stderr}`)
  return ms
}

// Cold baseline: a fresh process creating the program (what a cold run cannot skip).
const coldBaseline = median(
  Array.from({ length: REPS }, () => {
    const t = performance.now()
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(root, 'scripts', 'bench', 'catalog-baseline.ts')],
      {
        cwd: root,
        encoding: 'utf8',
      },
    )
    if (run.status !== 0) throw new Error(`the cold baseline failed:\n${run.stderr}`)
    return performance.now() - t
  }),
)

// Warm baseline: program creation in this process (parse + bind of every package source and the .d.ts they import).
const baseline = median(
  Array.from({ length: REPS }, () => {
    const loaded = loadProject(root)
    return time(() => loaded.project.getProgram().compilerObject.getTypeChecker())
  }),
)

// Process start: node + tsx + loading the TypeScript compiler (ts-morph), doing nothing.
const startup = median(
  Array.from({ length: REPS }, () => {
    const t = performance.now()
    spawnSync(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '-e', "await import('ts-morph')"],
      {
        cwd: join(root, 'scripts'),
      },
    )
    return performance.now() - t
  }),
)
const coldGenerate = median(Array.from({ length: REPS }, () => cold(['generate', '--dry-run'])))
const coldVerify = median(Array.from({ length: REPS }, () => cold(['verify'])))

// One in-process run on a fresh project, by phase (the checker caches types, so each phase
// is timed the first time it runs).
const phases: Record<string, number> = {}
let loaded!: ReturnType<typeof loadProject>
phases['load sources (ts-morph Project)'] = time(() => {
  loaded = loadProject(root)
})
phases['create program + checker'] = time(() => loaded.project.getProgram().compilerObject.getTypeChecker())
let model!: ReturnType<typeof buildModel>
phases['discover + normalize + canonicalize'] = time(() => {
  model = buildModel(loaded)
})
let catalog!: ReturnType<typeof buildMachineCatalog>
phases['machine catalog + JSON Schemas'] = time(() => {
  catalog = buildMachineCatalog(model)
})
phases['render en + zh markdown'] = time(() => {
  renderMarkdown(model, catalog, 'en')
  renderMarkdown(model, catalog, 'zh')
})
const gen = generateCatalog({ root, loaded })
phases['golden logs through the chain (child process)'] = time(() =>
  runtimeOf(
    root,
    gen,
    readSnapshots(root).map((v) => ({
      version: v.version,
      path: join(root, goldenPath(v.version)),
      label: goldenPath(v.version),
    })),
  ),
)
phases['verify, project reused'] = time(() => verifyCatalog({ root, loaded }))
phases['generate, project reused'] = time(() => generateCatalog({ root, loaded }))

const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`
const r = (ms: number) => `${(ms / baseline).toFixed(2)}×`
const rc = (ms: number) => `${(ms / coldBaseline).toFixed(2)}×`
console.log(`repository: ${model.events.length} events, ${Object.keys(catalog.types).length} types`)
console.log(`cold baseline (a fresh process creating the program, median of ${REPS}): ${s(coldBaseline)}`)
console.log(
  `cold generate --dry-run (median of ${REPS}): ${s(coldGenerate)}  ${rc(coldGenerate)} cold baseline  (goal < 5 s on 2 cores)`,
)
console.log(
  `cold verify (median of ${REPS}):              ${s(coldVerify)}  ${rc(coldVerify)} cold baseline  (goal < 5 s on 2 cores; hook timeout 45 s)`,
)
console.log(
  `process start + load TypeScript (median of ${REPS}): ${s(startup)}  ${rc(startup)} cold baseline`,
)
console.log(`warm baseline (program creation in this process, median of ${REPS}): ${s(baseline)}`)
console.log(
  `share of a cold verify spent starting the process and loading TypeScript: ${((100 * startup) / coldVerify).toFixed(0)}%`,
)
const phased = spawnSync(process.execPath, ['--import', 'tsx', cli, 'verify', '--time'], {
  cwd: root,
  encoding: 'utf8',
})
console.log(`one cold verify, by phase: ${phased.stderr.trim().split('\n').pop()}`)
console.log('in-process phases (warm process), against the warm baseline:')
for (const [name, ms] of Object.entries(phases))
  console.log(`  ${name.padEnd(40)} ${s(ms).padStart(8)}  ${r(ms)}`)
const dominant = Object.entries(phases)
  .filter(([n]) => !n.includes('reused'))
  .sort((a, b) => b[1] - a[1])[0]!
console.log(`dominant in-process phase: ${dominant[0]}`)
