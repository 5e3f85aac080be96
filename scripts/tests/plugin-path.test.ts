// The plugin guide's path, as a third party walks it, with real processes only: `pnpm
// new-plugin` into a directory outside this repository's packages, `pnpm install` there, its
// own tests and typecheck, the package linked into a project, the example preset copied, `pnpm
// scripted-server` started from its command line, and `keel -p` — which must call the plugin's
// tool and exit 0. Then what happens later: a resume from another directory, the plugin
// uninstalled (named on resume), `keel sessions show` printing its events as stored, and
// `verify-persistence-catalog --package` catching a stale generated module.
import { type ChildProcess, spawn } from 'node:child_process'
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'

const repo = join(import.meta.dirname, '..', '..')
const KEEL = join(repo, 'packages/cli/cli/bin/keel.js')
const base = realpathSync(mkdtempSync(join(tmpdir(), 'keel-plugin-path-')))
const children: ChildProcess[] = []
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM')
  rmSync(base, { recursive: true, force: true })
})

/** The environment of every step: no DeepSeek key or Keel setting from outside. */
const tools: Record<string, string> = {}
for (const [k, v] of Object.entries(process.env))
  if (v !== undefined && !k.startsWith('DEEPSEEK_') && !k.startsWith('KEEL_') && k !== 'INIT_CWD')
    tools[k] = v
/** `keel`'s: a private KEEL_HOME, and HOME (so no hook settings of the user's are read). pnpm keeps its own store. */
const env = { ...tools, KEEL_HOME: join(base, 'home'), HOME: base, NO_COLOR: '1' }

interface Run {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs a command to its end (no terminal). */
function run(command: string, args: readonly string[], cwd: string): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: command === 'pnpm' ? tools : env,
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    children.push(child)
    let stdout = ''
    let stderr = ''
    child.stdout!.setEncoding('utf8').on('data', (c: string) => {
      stdout += c
    })
    child.stderr!.setEncoding('utf8').on('data', (c: string) => {
      stderr += c
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
  })
}

const ok = (r: Run) => expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0)
const keel = (args: string[], cwd: string) => run(process.execPath, [KEEL, ...args], cwd)

/** `pnpm scripted-server --script <file> --repeat`, started in the repository; resolves to its base URL. */
function scriptedServer(script: string): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn('pnpm', ['-C', repo, '--silent', 'scripted-server', '--script', script, '--repeat'], {
    env: tools,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group: pnpm, tsx and node stop together
  })
  children.push(child)
  let err = ''
  child.stderr!.setEncoding('utf8').on('data', (c: string) => {
    err += c
  })
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout!.setEncoding('utf8').on('data', (c: string) => {
      out += c
      const line = out.split('\n').find((l) => l.startsWith('http://'))
      if (line)
        resolve({
          url: line.trim(),
          stop: () =>
            new Promise((done) => {
              child.on('close', () => done())
              process.kill(-child.pid!, 'SIGTERM')
            }),
        })
    })
    child.on('close', (code) => reject(new Error(`scripted-server exited ${code}: ${err}`)))
  })
}

describe("the plugin guide's path, from pnpm new-plugin to keel -p", () => {
  it('scaffolds, installs, tests, links, presets and runs a third-party plugin; resume and uninstall behave', async () => {
    const work = join(base, 'work')
    const project = join(base, 'project')
    mkdirSync(work, { recursive: true })
    mkdirSync(project, { recursive: true })
    mkdirSync(env.KEEL_HOME!, { recursive: true })

    // 1. scaffold outside the repository (relative --dir: from where pnpm was started)
    const scaffold = await run(
      'pnpm',
      ['-C', repo, 'new-plugin', 'notes', '--event', 'added', '--dir', 'notes', '--scope', '@acme'],
      work,
    )
    ok(scaffold)
    const plugin = join(work, 'notes')
    expect(readFileSync(join(plugin, 'src/events.generated.ts'), 'utf8')).toContain(
      'registerEvents("@acme/notes", eventValidators)',
    )

    // 2. its dependencies (Keel linked from this checkout, zod from the store), tests and types
    ok(await run('pnpm', ['install', '--offline'], plugin))
    const tests = await run('pnpm', ['test'], plugin)
    ok(tests)
    expect(tests.stdout).toMatch(/2 passed/)
    ok(await run('pnpm', ['typecheck'], plugin))

    // 3. installed where keel finds it, and its example preset copied into the project
    ok(await run('pnpm', ['add', '--offline', `link:${plugin}`], project))
    mkdirSync(join(project, '.keel', 'presets'), { recursive: true })
    copyFileSync(join(plugin, 'examples/preset.json'), join(project, '.keel', 'presets', 'notes.json'))

    // 4. the scripted model, from its command line, and keel -p
    const server = await scriptedServer(join(plugin, 'examples/script.json'))
    try {
      const first = await keel(
        ['--preset', 'notes', '--base-url', server.url, '-p', 'remember to buy milk'],
        project,
      )
      ok(first)
      expect(first.stdout).toBe('Recorded: buy milk.\n')
      expect(first.stderr).toContain('preset notes: @acme/notes@0.1.0')
      expect(first.stderr).toContain('[@acme/notes] recorded: buy milk')
      const id = /keel resume (\S+)\)/.exec(first.stderr)![1]!
      const log = readFileSync(join(env.KEEL_HOME!, 'sessions', id, 'session.jsonl'), 'utf8')
      expect(log).toContain('"type":"notes/added"')

      // 5. resumed from another directory: the recorded plugin is found again, by name
      const again = await keel(['resume', id, '--base-url', server.url, '-p', 'once more'], base)
      ok(again)
      expect(again.stderr).toContain('rebuilt the recorded preset notes: @acme/notes@0.1.0')

      // 5b. forked under a preset naming the package: the check made before forking finds it
      const forked = await keel(
        ['fork', id, '--preset', 'notes', '--base-url', server.url, '-p', 'fork it'],
        project,
      )
      ok(forked)
      expect(forked.stderr).toContain('rebuilt the recorded preset notes: @acme/notes@0.1.0')

      // 6. uninstalled: the resume says which plugin is missing; show prints its events as stored
      rmSync(join(project, 'node_modules', '@acme', 'notes'))
      const gone = await keel(['resume', '--last', '--base-url', server.url, '-p', 'and now?'], project)
      expect(gone.code).toBe(2)
      expect(gone.stderr).toContain('COMPOSITION_UNAVAILABLE')
      expect(gone.stderr).toContain('the plugin it ran with, which is not installed: @acme/notes 0.1.0')
      const show = await keel(['sessions', 'show', id], project)
      ok(show)
      expect(show.stdout).toContain('notice  UNKNOWN_EVENTS_KEPT')
      expect(show.stdout).toMatch(/notes\/added\s+\{"text":"buy milk"\}/)
    } finally {
      await server.stop()
    }

    // 7. the generated module is checked like the repository's: stale after an edit, fixed by gen
    const events = join(plugin, 'src/events.ts')
    writeFileSync(
      events,
      readFileSync(events, 'utf8').replace(
        '  text: string\n',
        '  text: string\n  /** When. */\n  at?: number\n',
      ),
    )
    const stale = await run('pnpm', ['-C', repo, 'verify-persistence-catalog', '--package', plugin], work)
    expect(stale.code).toBe(1)
    expect(stale.stderr).toContain('differs from the sources: run pnpm gen-persistence-catalog --package')
    ok(await run('pnpm', ['-C', repo, 'gen-persistence-catalog', '--package', plugin], work))
    expect(readFileSync(join(plugin, 'src/events.generated.ts'), 'utf8')).toContain(
      'at: z.number().optional()',
    )
  }, 600_000)
})
