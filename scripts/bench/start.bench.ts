// How fast `keel` starts, as a ratio to `node -e 0` measured in the same rounds (the least
// any Node program pays). Each round runs, one after another: `node -e 0`, `keel --help`,
// `keel --version`, and `keel -p "…" --output stream-json --include-partial-messages`
// against the local scripted server, timing that one to its first stdout line (`init`), to
// the first text of the answer (the first `stream_event`) and to its exit. The figure is the
// median over the rounds. Goals: `keel --help` ≤ 4×, the first output of `keel -p` ≤ 8×.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
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
for (const [k, v] of Object.entries(process.env))
  if (v !== undefined && !k.startsWith('KEEL_') && !k.startsWith('DEEPSEEK_') && k !== 'HOME') env[k] = v

interface Timing {
  /** First stdout line. */
  first: number
  /** First line matching `until`. */
  marked: number
  exit: number
}

/** Runs `node args…`; times its first stdout line, the first line containing `until`, and its exit. */
function time(args: readonly string[], until?: string): Promise<Timing> {
  return new Promise((resolve, reject) => {
    const start = performance.now()
    const child = spawn(process.execPath, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] })
    let first = Number.NaN
    let marked = Number.NaN
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk
      const now = performance.now() - start
      if (Number.isNaN(first) && out.includes('\n')) first = now
      if (until !== undefined && Number.isNaN(marked) && out.includes(until)) marked = now
    })
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      err += chunk
    })
    child.on('error', reject)
    child.on('close', (code) => {
      const exit = performance.now() - start
      if (code !== 0) reject(new Error(`node ${args.join(' ')} exited ${code}: ${err.slice(0, 500)}`))
      else resolve({ first, marked, exit })
    })
  })
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b)
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2
}

const samples: Record<string, number[]> = {
  node: [],
  help: [],
  version: [],
  pInit: [],
  pText: [],
  pExit: [],
}
const print = ['-p', 'say hello', '--output', 'stream-json', '--include-partial-messages']
const printArgs = [KEEL, ...print, '--base-url', server.baseURL, '--preset', 'coding']
// One warm-up round (the file cache), not counted.
await time(['-e', '0'])
await time([KEEL, '--help'])
await time(printArgs, '"stream_event"')
for (let round = 0; round < ROUNDS; round++) {
  samples.node!.push((await time(['-e', '0'])).exit)
  samples.help!.push((await time([KEEL, '--help'])).exit)
  samples.version!.push((await time([KEEL, '--version'])).exit)
  const p = await time(printArgs, '"stream_event"')
  samples.pInit!.push(p.first)
  samples.pText!.push(p.marked)
  samples.pExit!.push(p.exit)
}
await server.close()
rmSync(home, { recursive: true, force: true })
rmSync(cwd, { recursive: true, force: true })

const base = median(samples.node!)
const line = (label: string, key: string, goal?: number) => {
  const ms = median(samples[key]!)
  const ratio = ms / base
  const verdict =
    goal === undefined ? '' : ratio <= goal ? `  goal ≤ ${goal}×: met` : `  goal ≤ ${goal}×: MISSED`
  console.log(
    `${label.padEnd(44)} ${ms.toFixed(0).padStart(6)} ms  ${ratio.toFixed(2).padStart(5)}×${verdict}`,
  )
  return goal === undefined || ratio <= goal
}
console.log(`median of ${ROUNDS} rounds; baseline node -e 0 = ${base.toFixed(0)} ms`)
const ok = [
  line('keel --help', 'help', 4),
  line('keel --version', 'version'),
  line('keel -p: first output (the init line)', 'pInit', 8),
  line('keel -p: first text of the answer', 'pText'),
  line('keel -p: exit (answer done, log closed)', 'pExit'),
].every(Boolean)
if (!ok) console.log('a start-up goal was missed (see above)')
