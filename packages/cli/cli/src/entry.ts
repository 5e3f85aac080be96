import { colorWanted } from './color.js'
import { runCli } from './commands.js'
import { EXIT, type Interrupt, interruptExitCode } from './exit-codes.js'

/**
 * Reads all of stdin (a pipe or a file, never a terminal). A pipe nobody writes to or closes
 * would wait forever, so after a few quiet seconds it says on stderr what it waits for.
 */
function readAll(stream: NodeJS.ReadStream, say: (text: string) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    const hint = setTimeout(
      () =>
        say(
          'keel: waiting for stdin to close (the piped text is the task; use </dev/null to pipe nothing)\n',
        ),
      3000,
    )
    hint.unref()
    stream.on('data', (chunk: Buffer) => {
      clearTimeout(hint)
      chunks.push(chunk)
    })
    stream.on('end', () => {
      clearTimeout(hint)
      resolve(Buffer.concat(chunks).toString('utf8'))
    })
    stream.on('error', (error) => {
      clearTimeout(hint)
      reject(error)
    })
  })
}

/**
 * Runs one `keel` command line as the process. SIGINT (Ctrl-C), SIGTERM and SIGHUP (a
 * closed terminal) end a running turn — the interrupted prefix is kept, the log is closed,
 * a `result` is printed — and the process exits with 130, 143 or 129; a second signal exits
 * at once. A closed stdout (piped into `head`) does not kill the run, since the session log
 * is the record; colour as {@link colorWanted} says (a TTY, NO_COLOR, FORCE_COLOR). Piped stdin is offered to the
 * command as the task or its context. Sets the exit code.
 */
export async function runAsProcess(argv: readonly string[]): Promise<void> {
  const controller = new AbortController()
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (controller.signal.aborted) process.exit(interruptExitCode(controller.signal) ?? EXIT.interrupted)
      controller.abort({ signal } satisfies Interrupt)
    })
  }
  let stdoutOpen = true
  process.stdout.on('error', () => {
    stdoutOpen = false
  })
  let stderrOpen = true
  process.stderr.on('error', () => {
    stderrOpen = false
  })
  const err = (text: string) => {
    if (stderrOpen) process.stderr.write(text)
  }
  process.exitCode = await runCli(argv, {
    env: process.env,
    out: (text) => {
      if (stdoutOpen) process.stdout.write(text)
    },
    err,
    color: colorWanted(process.env, process.stdout.isTTY === true),
    signal: controller.signal,
    // `pnpm keel …` runs in the repository root; the user meant the directory they typed it in.
    ...(process.env.npm_lifecycle_event === 'keel' && process.env.INIT_CWD
      ? { cwd: process.env.INIT_CWD }
      : {}),
    ...(process.stdin.isTTY && process.stdout.isTTY
      ? { terminal: { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr } }
      : {}),
    ...(process.stdin.isTTY ? {} : { readStdin: () => readAll(process.stdin, err), stdin: process.stdin }),
  })
  // Plugins may leave timers or child handles behind (the sandbox probe); the run is over.
  process.exit(process.exitCode)
}
