import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, realpath, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type ScriptedResponse, type ScriptedServer, startScriptedServer } from '@keel/scripted-server'

/** The `keel` binary as users run it. */
export const KEEL_BIN = fileURLToPath(new URL('../bin/keel.js', import.meta.url))

/** A private KEEL_HOME, a workspace and a scripted server for one test. */
export interface KeelRig {
  home: string
  cwd: string
  server: ScriptedServer
  /** Environment for `keel`: private home, no DeepSeek variables from the outer shell. */
  env: Record<string, string>
  close(): Promise<void>
}

export async function keelRig(script: ScriptedResponse[] = []): Promise<KeelRig> {
  const base = await realpath(await mkdtemp(join(tmpdir(), 'keel-cli-')))
  const home = join(base, 'home')
  const cwd = join(base, 'ws')
  await mkdir(cwd, { recursive: true })
  await mkdir(home, { recursive: true })
  const server = await startScriptedServer({ script })
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('DEEPSEEK_') && !key.startsWith('KEEL_')) env[key] = value
  }
  // HOME too, so the hooks plugin reads this test's (absent) ~/.claude, not the user's.
  Object.assign(env, { KEEL_HOME: home, HOME: base, NO_COLOR: '1' })
  return { home, cwd, server, env, close: () => server.close() }
}

/** What a finished `keel` process left. */
export interface KeelRun {
  code: number | null
  signal: NodeJS.Signals | null
  stdout: string
  stderr: string
}

/** Runs `node bin/keel.js …` as a child process (no terminal) and collects its output. */
export function runKeel(
  args: readonly string[],
  options: {
    env: Record<string, string>
    cwd?: string
    onStdout?: (text: string, child: ReturnType<typeof spawn>) => void
    /** Piped into stdin (closed after); without it stdin is /dev/null. */
    input?: string
    /** Given stdin as a pipe left open: the test writes to it (and ends it). */
    withStdin?: (stdin: NodeJS.WritableStream, child: ReturnType<typeof spawn>) => void
  },
): Promise<KeelRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [KEEL_BIN, ...args], {
      env: options.env,
      cwd: options.cwd ?? process.cwd(),
      stdio: [options.input === undefined && !options.withStdin ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    })
    if (options.input !== undefined) child.stdin!.end(options.input)
    else if (options.withStdin) options.withStdin(child.stdin!, child)
    let stdout = ''
    let stderr = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
      options.onStdout?.(stdout, child)
    })
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk
    })
    const timer = setTimeout(() => child.kill('SIGKILL'), 90_000)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
  })
}

/** Writes `preset` as the user preset `<id>.json` into the rig's KEEL_HOME. */
async function writeUserPreset(
  home: string,
  preset: { id: string } & Record<string, unknown>,
): Promise<void> {
  await mkdir(join(home, 'presets'), { recursive: true })
  await writeFile(join(home, 'presets', `${preset.id}.json`), JSON.stringify(preset))
}

/**
 * Writes the user preset `asking` into the rig's KEEL_HOME: approval with the OS sandbox off,
 * so every bash command is asked about (and refused where nobody can answer), the todo
 * plugin, fs and shell.
 */
export function writeAskingPreset(home: string): Promise<void> {
  return writeUserPreset(home, {
    id: 'asking',
    description: 'asks before every shell command',
    plugins: [{ use: '@keel/user-approval', config: { osSandbox: 'off' } }, { use: '@keel/todo' }],
    tools: ['fs', 'shell'],
  })
}

/** A user preset that asks before every write and every shell command (strict policy, no OS sandbox). */
export function writeStrictPreset(home: string): Promise<void> {
  return writeUserPreset(home, {
    id: 'strict',
    description: 'asks before every write and shell command',
    plugins: [{ use: '@keel/user-approval', config: { osSandbox: 'off', approvalPolicy: 'strict' } }],
    tools: ['fs', 'shell'],
    prices: { 'deepseek-v4-flash': { rates: { cacheHit: 0, cacheMiss: 1000, output: 2000 } } },
  })
}

/** Cleanups of one test file, run in reverse after each test (register it with `afterEach(cleanups.run)`). */
export function cleanupList() {
  const list: Array<() => Promise<void> | void> = []
  return {
    add(cleanup: () => Promise<void> | void): void {
      list.push(cleanup)
    },
    async run(): Promise<void> {
      for (const cleanup of list.splice(0).reverse()) await cleanup()
    },
  }
}
