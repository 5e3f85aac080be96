// `pnpm scripted-server --script file.json [--port N] [--host H] [--repeat]`: the scripted
// server as a process, so a person (a plugin author) can drive `keel` against a script:
//   keel --base-url "$(the URL it prints)" -p "…"
// stdout gets one line, the base URL (for scripts); stderr says what it serves and one line
// per request. Relative paths are resolved from where pnpm was started (INIT_CWD).
import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { errorMessage } from '@keel/base'
import { parseScriptedResponse, type ScriptedResponse } from './script.js'
import { startScriptedServer } from './server.js'

const USAGE =
  'usage: pnpm scripted-server --script <file.json> [--port <n>] [--host <address>] [--repeat]\n' +
  '  <file.json>: a JSON array of scripted responses, e.g.\n' +
  '    [{ "toolCalls": [{ "name": "read_file", "arguments": { "path": "a.txt" } }] }, { "text": "Done." }]\n' +
  '  --repeat: start the script again once it is used up (else the server answers 500)'

/** A command-line problem: the message, and the exit code (2: bad usage, 1: a bad script). */
class CliProblem extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message)
  }
}

interface Options {
  script: string
  port: number
  host: string
  repeat: boolean
}

function options(argv: readonly string[], cwd: string): Options {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof spec; allowPositionals: false }>>
  const spec = {
    script: { type: 'string' },
    port: { type: 'string' },
    host: { type: 'string' },
    repeat: { type: 'boolean' },
    help: { type: 'boolean' },
  } as const
  try {
    parsed = parseArgs({ args: [...argv].filter((a) => a !== '--'), options: spec, allowPositionals: false })
  } catch (error) {
    throw new CliProblem(`${errorMessage(error)}\n${USAGE}`, 2)
  }
  const v = parsed.values
  if (v.help) throw new CliProblem(USAGE, 2)
  if (v.script === undefined) throw new CliProblem(`--script is required\n${USAGE}`, 2)
  const port = v.port === undefined ? 0 : Number(v.port)
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new CliProblem(`--port must be a port number (0-65535), got ${JSON.stringify(v.port)}`, 2)
  return { script: resolve(cwd, v.script), port, host: v.host ?? '127.0.0.1', repeat: v.repeat === true }
}

/** Reads and validates the script file: every step checked, the first bad one named. */
async function readScript(file: string): Promise<ScriptedResponse[]> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    throw new CliProblem(`cannot read the script ${file}: ${errorMessage(error)}`, 1)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw new CliProblem(`${file} is not JSON: ${errorMessage(error)}`, 1)
  }
  if (!Array.isArray(json) || json.length === 0)
    throw new CliProblem(`${file} must hold a non-empty JSON array of scripted responses`, 1)
  try {
    return json.map((step, i) => parseScriptedResponse(step, i, file))
  } catch (error) {
    throw new CliProblem(errorMessage(error), 1)
  }
}

function describe(step: ScriptedResponse | undefined): string {
  if (step === undefined) return 'not answered from the script'
  if (step.fault) return `fault ${step.fault.type}`
  const calls = (step.toolCalls ?? []).map((c) => c.name)
  return calls.length > 0
    ? `tool call ${calls.join(', ')}`
    : `text ${JSON.stringify((step.text ?? '').slice(0, 40))}`
}

/** Runs the server until SIGINT/SIGTERM; returns the exit code. */
async function main(argv: readonly string[], env: NodeJS.ProcessEnv): Promise<number> {
  let opts: Options
  let script: ScriptedResponse[]
  try {
    opts = options(argv, env.INIT_CWD ?? process.cwd())
    script = await readScript(opts.script)
  } catch (error) {
    process.stderr.write(`scripted-server: ${errorMessage(error)}\n`)
    return error instanceof CliProblem ? error.exitCode : 1
  }
  let next = 0
  const server = await startScriptedServer({
    script,
    host: opts.host,
    port: opts.port,
    ...(opts.repeat ? { handler: () => script[next++ % script.length]! } : {}),
  })
  let seen = 0
  let told = 0
  const report = () => {
    for (; seen < server.requests.length; seen++) {
      const r = server.requests[seen]!
      if (r.outcome === 'pending') break
      process.stderr.write(
        `scripted-server: request ${r.index + 1}: ${describe(r.response)} (${r.outcome})\n`,
      )
    }
    for (; told < server.problems.length; told++)
      process.stderr.write(`scripted-server: ${server.problems[told]}\n`)
  }
  const timer = setInterval(report, 50)
  process.stdout.write(`${server.baseURL}\n`)
  process.stderr.write(
    `scripted-server: ${script.length} step(s) from ${opts.script}${opts.repeat ? ', repeated' : ''} at ${server.baseURL}\n` +
      `scripted-server: run keel --base-url ${server.baseURL} -p "…" (Ctrl-C stops the server)\n`,
  )
  await new Promise<void>((done) => {
    process.once('SIGINT', done)
    process.once('SIGTERM', done)
  })
  clearInterval(timer)
  await server.close()
  report()
  return 0
}

process.exitCode = await main(process.argv.slice(2), process.env)
