// What the code that runs does with the format history (see runtime-probe.ts): which
// migration steps it registers, and whether each golden log loads through them.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { WorkspacePackage } from './workspace.js'

export interface MigrationStep {
  from: number
  to: number
  owner: string
}

export interface RuntimeReport {
  steps: MigrationStep[]
  /** Per golden log asked for: why it does not load (empty when it does). */
  goldens: Array<{ version: number; problems: string[] }>
  /** Why the code could not be run (the chain then counts as unproven, every golden as unloaded). */
  error?: string
}

/** A golden log to load: its format version, absolute path, and how messages name it. */
export interface GoldenJob {
  version: number
  path: string
  label: string
}

/**
 * Imports, in a child process, the session package, every package that owns events and every
 * package whose sources call `registerMigration`, reads SESSION_MIGRATIONS, and loads each
 * golden log through the chain. Workspace names resolve to their `src/index.ts` through a
 * generated tsconfig `paths` map (so a fixture repository without node_modules works too).
 */
export function runtimeReport(
  root: string,
  packages: readonly WorkspacePackage[],
  sessionModule: string,
  owners: ReadonlySet<string>,
  goldens: readonly GoldenJob[],
): RuntimeReport {
  const session = packages.find((p) => p.name === sessionModule)
  const unproven = (error: string): RuntimeReport => ({
    steps: [],
    goldens: goldens.map((g) => ({ version: g.version, problems: [`${g.label} was not loaded (${error})`] })),
    error,
  })
  if (!session) return unproven(`no package ${sessionModule}`)
  const mentions = (p: WorkspacePackage) => {
    const dir = join(root, p.dir, 'src')
    return existsSync(dir) && grepDir(dir, 'registerMigration')
  }
  const entries = packages
    .filter(
      (p) =>
        !p.fixture && existsSync(p.entry) && (owners.has(p.name) || p.name === sessionModule || mentions(p)),
    )
    .map((p) => p.entry)
  const tmp = mkdtempSync(join(tmpdir(), 'keel-runtime-'))
  try {
    const paths: Record<string, string[]> = {}
    for (const p of packages) paths[p.name] = [p.entry]
    // A fixture repository has no node_modules: zod (what the generated validators import)
    // resolves to the generator's own.
    const require = createRequire(import.meta.url)
    if (!existsSync(join(root, session.dir, 'node_modules', 'zod')))
      paths.zod = [fileURLToPath(import.meta.resolve('zod'))]
    const tsconfig = join(tmp, 'tsconfig.json')
    writeFileSync(tsconfig, JSON.stringify({ compilerOptions: { baseUrl: '/', paths } }))
    const job = join(tmp, 'job.json')
    writeFileSync(job, JSON.stringify({ session: session.entry, entries, goldens }))
    const probe = join(import.meta.dirname, 'runtime-probe.ts')
    const run = spawnSync(process.execPath, ['--import', require.resolve('tsx'), probe, job], {
      encoding: 'utf8',
      env: { ...process.env, TSX_TSCONFIG_PATH: tsconfig },
      timeout: 120_000,
    })
    if (run.status !== 0) {
      const why = (run.stderr || run.error?.message || `exit ${run.status}`)
        .trim()
        .split('\n')
        .slice(0, 6)
        .join('\n')
      return unproven(`importing the packages to read SESSION_MIGRATIONS failed: ${why}`)
    }
    return JSON.parse(run.stdout) as RuntimeReport
  } finally {
    rmSync(tmp, { recursive: true, force: true })
  }
}

function grepDir(dir: string, needle: string): boolean {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name)
    if (e.isDirectory()) {
      if (grepDir(p, needle)) return true
    } else if (/\.[mc]?ts$/.test(e.name) && readFileSync(p, 'utf8').includes(needle)) return true
  }
  return false
}
