// The migration chain as the code that runs registers it (see migrations-probe.ts).
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { WorkspacePackage } from './workspace.js'

export interface RuntimeMigrations {
  steps: Array<{ from: number; to: number }>
  /** Why the registry could not be read (the chain then counts as unproven). */
  error?: string
}

/**
 * Imports, in a child process, the session package, every package that owns events and every
 * package whose sources call `registerMigration`, then reads SESSION_MIGRATIONS. Workspace
 * names resolve to their `src/index.ts` through a generated tsconfig `paths` map (so a fixture
 * repository without node_modules works too).
 */
export function runtimeMigrations(
  root: string,
  packages: readonly WorkspacePackage[],
  sessionModule: string,
  owners: ReadonlySet<string>,
): RuntimeMigrations {
  const session = packages.find((p) => p.name === sessionModule)
  if (!session) return { steps: [], error: `no package ${sessionModule}` }
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
  const tmp = mkdtempSync(join(tmpdir(), 'keel-migrations-'))
  try {
    const paths: Record<string, string[]> = {}
    for (const p of packages) paths[p.name] = [p.entry]
    const tsconfig = join(tmp, 'tsconfig.json')
    writeFileSync(tsconfig, JSON.stringify({ compilerOptions: { baseUrl: '/', paths } }))
    const require = createRequire(import.meta.url)
    const tsx = require.resolve('tsx')
    const probe = join(import.meta.dirname, 'migrations-probe.ts')
    const run = spawnSync(process.execPath, ['--import', tsx, probe, session.entry, ...entries], {
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
      return { steps: [], error: `importing the packages to read SESSION_MIGRATIONS failed: ${why}` }
    }
    return { steps: JSON.parse(run.stdout) as RuntimeMigrations['steps'] }
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
