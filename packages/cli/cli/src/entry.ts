import { runCli } from './commands.js'

/**
 * Runs one `keel` command line as the process: Ctrl-C aborts a running turn (the
 * interrupted prefix is kept in the log) and a second Ctrl-C exits; a closed stdout (piped
 * into `head`) does not kill the run, since the session log is the record; colour only on a
 * TTY without NO_COLOR. Sets the exit code.
 */
export async function runAsProcess(argv: readonly string[]): Promise<void> {
  const controller = new AbortController()
  process.on('SIGINT', () => {
    if (controller.signal.aborted) process.exit(130)
    controller.abort()
  })
  let stdoutOpen = true
  process.stdout.on('error', () => {
    stdoutOpen = false
  })
  process.exitCode = await runCli(argv, {
    env: process.env,
    out: (text) => {
      if (stdoutOpen) process.stdout.write(text)
    },
    err: (text) => process.stderr.write(text),
    color: process.stdout.isTTY === true && !process.env.NO_COLOR,
    signal: controller.signal,
    // `pnpm keel …` runs in the repository root; the user meant the directory they typed it in.
    ...(process.env.npm_lifecycle_event === 'keel' && process.env.INIT_CWD
      ? { cwd: process.env.INIT_CWD }
      : {}),
    ...(process.stdin.isTTY && process.stdout.isTTY
      ? { terminal: { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr } }
      : {}),
  })
  // Plugins may leave timers or child handles behind (the sandbox probe); the run is over.
  process.exit(process.exitCode)
}
