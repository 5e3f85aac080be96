import { join } from 'node:path'
import { Session } from '@keel/session'
import { HookEngine, type HookSourceId, loadHooks } from '../src/index.js'
import { tempDir, writeFile, writeJson } from './helpers.js'

/** A temporary project with a hook settings file of one dialect, and an engine over it. */
export function project(): { dir: string; home: string } {
  const root = tempDir()
  return { dir: join(root, 'project'), home: join(root, 'home') }
}

/** Writes `script` into the project's `.hooks/` and returns a command line running it with `interpreter`. */
export function script(
  dir: string,
  name: string,
  interpreter: 'bash' | 'node' | 'python3',
  body: string,
): string {
  writeFile(dir, `.hooks/${name}`, body, 0o755)
  return `${interpreter} "$CLAUDE_PROJECT_DIR/.hooks/${name}"`
}

type Layout = Record<
  string,
  Array<{ matcher?: string; hooks: Array<{ type: 'command'; command: string; timeout?: number }> }>
>

/** An engine over `layout` written as the settings file of `dialect`. */
export function engineFor(
  p: { dir: string; home: string },
  layout: Layout,
  dialect: 'keel' | 'claude' | 'codex' = 'claude',
  session: Session = Session.create(`hooks-${Math.random().toString(36).slice(2)}`),
): { engine: HookEngine; session: Session } {
  const file = { keel: '.keel/settings.json', claude: '.claude/settings.json', codex: '.codex/hooks.json' }[
    dialect
  ]
  const source: HookSourceId = { keel: 'keel-project', claude: 'claude-project', codex: 'codex-project' }[
    dialect
  ] as HookSourceId
  writeJson(p.dir, file, { hooks: layout })
  const loaded = loadHooks({
    sources: [source],
    locations: {
      projectDir: p.dir,
      home: p.home,
      keelHome: join(p.home, '.keel'),
      codexHome: join(p.home, '.codex'),
    },
  })
  const engine = new HookEngine(loaded, {
    projectDir: p.dir,
    session,
    transcriptPath: '/tmp/transcript.jsonl',
  })
  return { engine, session }
}

export const cmd = (command: string, timeout?: number) => ({
  type: 'command' as const,
  command,
  ...(timeout === undefined ? {} : { timeout }),
})

/** A node one-liner hook that prints `value` as JSON on stdout. */
export function printsJson(value: unknown): string {
  return `node -e 'process.stdout.write(JSON.stringify(${JSON.stringify(value).replace(/'/g, "'\\''")}))'`
}
