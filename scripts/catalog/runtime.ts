// What the code that runs does with the format history (see runtime-probe.ts): which
// migration steps it registers, and whether each golden log loads through them.
import { spawn, spawnSync } from 'node:child_process'
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

/** What a run of the probe needs: its inputs, and the goldens it is asked to load. */
export interface RuntimeJob {
  owners: ReadonlySet<string>
  goldens: readonly GoldenJob[]
}

/** The child process command for `job`, and how to read its result; `cleanup` removes its files. */
function probeCommand(
  root: string,
  packages: readonly WorkspacePackage[],
  sessionModule: string,
  job: RuntimeJob,
): { args: string[]; env: NodeJS.ProcessEnv; cleanup(): void } | { error: string } {
  const session = packages.find((p) => p.name === sessionModule)
  if (!session) return { error: `no package ${sessionModule}` }
  const mentions = (p: WorkspacePackage) => {
    const dir = join(root, p.dir, 'src')
    return existsSync(dir) && grepDir(dir, 'registerMigration')
  }
  const entries = packages
    .filter(
      (p) =>
        !p.fixture &&
        existsSync(p.entry) &&
        (job.owners.has(p.name) || p.name === sessionModule || mentions(p)),
    )
    .map((p) => p.entry)
  const tmp = mkdtempSync(join(tmpdir(), 'keel-runtime-'))
  const paths: Record<string, string[]> = {}
  for (const p of packages) paths[p.name] = [p.entry]
  // A fixture repository has no node_modules: zod (what the generated validators import)
  // resolves to the generator's own.
  if (!existsSync(join(root, session.dir, 'node_modules', 'zod')))
    paths.zod = [fileURLToPath(import.meta.resolve('zod'))]
  const tsconfig = join(tmp, 'tsconfig.json')
  writeFileSync(tsconfig, JSON.stringify({ compilerOptions: { baseUrl: '/', paths } }))
  const jobFile = join(tmp, 'job.json')
  writeFileSync(jobFile, JSON.stringify({ session: session.entry, entries, goldens: job.goldens }))
  const tsx = createRequire(import.meta.url).resolve('tsx')
  return {
    args: ['--import', tsx, join(import.meta.dirname, 'runtime-probe.ts'), jobFile],
    env: { ...process.env, TSX_TSCONFIG_PATH: tsconfig },
    cleanup: () => rmSync(tmp, { recursive: true, force: true }),
  }
}

function reportOf(job: RuntimeJob, status: number | null, stdout: string, stderr: string): RuntimeReport {
  if (status === 0) return JSON.parse(stdout) as RuntimeReport
  const why = (stderr || `exit ${status}`).trim().split('\n').slice(0, 6).join('\n')
  return unproven(job, `importing the packages to read SESSION_MIGRATIONS failed: ${why}`)
}

function unproven(job: RuntimeJob, error: string): RuntimeReport {
  return {
    steps: [],
    goldens: job.goldens.map((g) => ({
      version: g.version,
      problems: [`${g.label} was not loaded (${error})`],
    })),
    error,
  }
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
  job: RuntimeJob,
): RuntimeReport {
  const command = probeCommand(root, packages, sessionModule, job)
  if ('error' in command) return unproven(job, command.error)
  try {
    const run = spawnSync(process.execPath, command.args, {
      encoding: 'utf8',
      env: command.env,
      timeout: 120_000,
    })
    return reportOf(job, run.status, run.stdout, run.stderr || run.error?.message || '')
  } finally {
    command.cleanup()
  }
}

/** {@link runtimeReport} started now, in the background (verify's CLI overlaps it with loading the sources). */
export function startRuntimeReport(
  root: string,
  packages: readonly WorkspacePackage[],
  sessionModule: string,
  job: RuntimeJob,
): Promise<RuntimeReport> {
  const command = probeCommand(root, packages, sessionModule, job)
  if ('error' in command) return Promise.resolve(unproven(job, command.error))
  return new Promise((resolve) => {
    const child = spawn(process.execPath, command.args, {
      env: command.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stdout = ''
    let stderr = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      stdout += d
    })
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000)
    child.on('error', (e) => {
      stderr += e.message
    })
    child.on('close', (status) => {
      clearTimeout(timer)
      command.cleanup()
      resolve(reportOf(job, status, stdout, stderr))
    })
  })
}

/**
 * The packages that declare events, read from the sources as text (cheap, before any
 * program exists): those merging into `sessionModule`'s SessionEventMap.
 */
export function declaringPackages(
  root: string,
  packages: readonly WorkspacePackage[],
  sessionModule: string,
): Set<string> {
  const out = new Set<string>()
  for (const p of packages) {
    const dir = join(root, p.dir, 'src')
    if (!p.fixture && existsSync(dir) && grepDir(dir, `declare module '${sessionModule}'`)) out.add(p.name)
  }
  return out
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
