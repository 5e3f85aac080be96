import { readFileSync } from 'node:fs'
import { elide, errorMessage, isKeelError } from '@keel/base'
import { EXIT } from './exit-codes.js'
import type { CliIo } from './io.js'
import { ERROR_LINE_CHARS, USAGE, UsageError, usageLine } from './usage.js'

export { describeEvent } from './describe-event.js'
export { EXIT, type Interrupt, interruptExitCode } from './exit-codes.js'
export { COMMANDS, USAGE } from './usage.js'

/** The version of this package. */
export function keelVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string
  }
  return pkg.version
}

/** Runs one `keel` command line; returns the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const [command, ...rest] = argv
  try {
    // Commands are imported when they run: `keel --version` or a bad flag need none of them.
    if (command === 'demo') {
      const { runDemo } = await import('./run-demo.js')
      const outcome = await runDemo({
        argv: rest,
        env: io.env,
        out: { write: io.out, color: io.color === true },
        err: io.err,
        ...(io.signal ? { signal: io.signal } : {}),
        ...(io.terminal ? { terminal: io.terminal } : {}),
      })
      return outcome.exitCode
    }
    const options = argv.indexOf('--') === -1 ? argv : argv.slice(0, argv.indexOf('--'))
    if (command === 'help' || options.includes('--help') || options.includes('-h')) {
      io.out(`${USAGE}\n`)
      return EXIT.ok
    }
    if (command === 'version' || command === '--version' || command === '-V') {
      io.out(`keel ${keelVersion()}\n`)
      return EXIT.ok
    }
    if (command === 'sessions') return await (await import('./sessions-command.js')).sessionsCommand(rest, io)
    if (command === 'presets') return await (await import('./presets-command.js')).presetsCommand(rest, io)
    if (command === 'mcp') return await (await import('./mcp-command.js')).mcpCommand(rest, io)
    const { commandAfterFlags, runAgentCommand } = await import('./run.js')
    const moved = commandAfterFlags(argv)
    if (moved) return await runCli(moved, io)
    if (command === 'resume') return await runAgentCommand('resume', rest, io)
    if (command === 'fork') return await runAgentCommand('fork', rest, io)
    return await runAgentCommand('new', argv, io)
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${usageLine(error)}\n`)
      return EXIT.usage
    }
    const code = isKeelError(error) ? error.code : undefined
    const message = elide(errorMessage(error).replace(/\s*\n\s*/gu, ' '), ERROR_LINE_CHARS)
    io.err(`keel: ${code ? `${code}: ` : ''}${message}\n`)
    return code !== undefined && usageCodes.test(code) ? EXIT.usage : EXIT.runtime
  }
}

/** Typed errors that mean the command line, the environment or a configuration file must change. */
const usageCodes =
  /^(PRESET_|MODEL_|COMPOSITION_UNAVAILABLE$|SESSION_NOT_FOUND$|STORE_KIND_INVALID$|KEEL_PG_URL_MISSING$|KEEL_HOME_UNUSABLE$|FORK_CUT_INVALID$)/
