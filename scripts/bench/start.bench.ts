// How fast `keel` starts, as a ratio to `node -e 0` measured in the same rounds (the least
// any Node program pays). Each round runs, one after another: `node -e 0`, `keel --help`,
// `keel --version`, and `keel -p "…" --output stream-json --include-partial-messages`
// against the local scripted server, timing that one to its first stdout line (`init`), to
// the first text of the answer (the first `stream_event`) and to its exit. The figure is the
// median over the rounds, in wall time (the goals: `keel --help` ≤ 4×, the first output of
// `keel -p` ≤ 8×) and in CPU time of the process (user + system, read at its exit by a probe
// preloaded into every run, the baseline's too): on a loaded machine the wall times of
// everything stretch alike, the CPU times much less.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { startScriptedServer } from '@keel/scripted-server'

const ROUNDS = Number(process.env.KEEL_BENCH_ROUNDS ?? 9)
const KEEL = fileURLToPath(new URL('../../packages/cli/cli/bin/keel.js', import.meta.url))

const server = await startScriptedServer({
  handler: () => ({ text: 'Hello from the scripted server. '.repeat(4) }),
})
const home = mkdtempSync(join(tmpdir(), 'keel-bench-start-'))
const cwd = mkdtempSync(join(tmpdir(), 'keel-bench-start-ws-'))
const env: Record<string, string> = { KEEL_HOME: home, HOME: home, NO_COLOR: '1' }
// Writes the process's CPU time to fd 3 when it exits (keel ends with process.exit: 'exit' runs).
const probe = join(home, 'cpu-probe.mjs')
writeFileSync(
  probe,
  "import { writeSync } from 'node:fs'\nprocess.on('exit', () => { const u = process.cpuUsage(); try { writeSync(3, String((u.user + u.system) / 1000)) } catch {} })\n",
)
for (const [k, v] of Object.entries(process.env))
  if (v !== undefined && !k.startsWith('KEEL_') && !k.startsWith('DEEPSEEK_') && k !== 'HOME') env[k] = v

interface Timing {
  /** First stdout line. */
  first: number
  /** First line matching `until`. */
  marked: number
  exit: number
  /** CPU milliseconds of the process. */
  cpu: number
}

/** Runs `node args…`; times its first stdout line, the first line containing `until`, and its exit. */
function time(args: readonly string[], until?: string): Promise<Timing> {
  return new Promise((resolve, reject) => {
    const start = performance.now()
    const child = spawn(process.execPath, ['--import', probe, ...args], {
      env,
      cwd,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    })
    let cpu = ''
    ;(child.stdio[3] as NodeJS.ReadableStream).setEncoding('utf8').on('data', (chunk: string) => {
      cpu += chunk
    })
    let first = Number.NaN
    let marked = Number.NaN
    let out = ''
    let err = ''
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk
      const now = performance.now() - start
      if (Number.isNaN(first) && out.includes('\n')) first = now
      if (until !== undefined && Number.isNaN(marked) && out.includes(until)) marked = now
    })
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk
    })
    child.on('error', reject)
    child.on('close', (code) => {
      const exit = performance.now() - start
      if (code !== 0) reject(new Error(`node ${args.join(' ')} exited ${code}: ${err.slice(0, 500)}`))
      else resolve({ first, marked, exit, cpu: Number(cpu) })
    })
  })
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

const samples: Record<string, number[]> = {}
const add = (key: string, value: number) => {
  samples[key] ??= []
  samples[key]!.push(value)
}
const print = ['-p', 'say hello', '--output', 'stream-json', '--include-partial-messages']
const printArgs = [KEEL, ...print, '--base-url', server.baseURL, '--preset', 'coding']
// One warm-up round (the file cache), not counted.
await time(['-e', '0'])
await time([KEEL, '--help'])
await time(printArgs, '"stream_event"')
for (let round = 0; round < ROUNDS; round++) {
  const node = await time(['-e', '0'])
  add('node', node.exit)
  add('node cpu', node.cpu)
  const help = await time([KEEL, '--help'])
  add('help', help.exit)
  add('help cpu', help.cpu)
  const version = await time([KEEL, '--version'])
  add('version', version.exit)
  add('version cpu', version.cpu)
  const p = await time(printArgs, '"stream_event"')
  add('p init', p.first)
  add('p text', p.marked)
  add('p exit', p.exit)
  add('p cpu', p.cpu)
}
await server.close()
rmSync(home, { recursive: true, force: true })
rmSync(cwd, { recursive: true, force: true })

const base = median(samples.node!)
const baseCpu = median(samples['node cpu']!)
const line = (label: string, key: string, goal?: number, cpuKey?: string) => {
  const ms = median(samples[key]!)
  const ratio = ms / base
  const cpu =
    cpuKey === undefined
      ? ''
      : `  cpu ${median(samples[cpuKey]!).toFixed(0).padStart(5)} ms ${(median(samples[cpuKey]!) / baseCpu).toFixed(2).padStart(5)}×`
  const verdict =
    goal === undefined ? '' : ratio <= goal ? `  goal ≤ ${goal}×: met` : `  goal ≤ ${goal}×: MISSED`
  console.log(
    `${label.padEnd(42)} ${ms.toFixed(0).padStart(6)} ms ${ratio.toFixed(2).padStart(5)}×${cpu}${verdict}`,
  )
  return goal === undefined || ratio <= goal
}
console.log(
  `median of ${ROUNDS} rounds; baseline node -e 0: ${base.toFixed(0)} ms wall, ${baseCpu.toFixed(0)} ms cpu (the ratios are to these)`,
)
const ok = [
  line('keel --help', 'help', 4, 'help cpu'),
  line('keel --version', 'version', undefined, 'version cpu'),
  line('keel -p: first output (the init line)', 'p init', 8),
  line('keel -p: first text of the answer', 'p text'),
  line('keel -p: exit (answer done, log closed)', 'p exit', undefined, 'p cpu'),
].every(Boolean)
if (!ok) console.log('a start-up goal was missed (see above)')
