// The I/O a `keel` command runs with: its environment, where it writes, its terminal. Shared by
// every command module, so it lives apart from the dispatcher (`commands.ts`).
/** Where a command reads its environment and writes its output. */
export interface CliIo {
  env: Readonly<Record<string, string | undefined>>
  out(text: string): void
  err(text: string): void
  /** Style the output with ANSI escapes. */
  color?: boolean
  /**
   * Aborted by SIGINT, SIGTERM or SIGHUP: a running turn ends (the log is closed) and the
   * command exits with the signal's code. The reason is an {@link Interrupt}.
   */
  signal?: AbortSignal
  /** The working directory (default `process.cwd()`). */
  cwd?: string
  /** Present when stdin and stdout are a terminal: interactive `keel` and approval prompts use it. */
  terminal?: Terminal
  /** Reads what was piped into stdin (set only when stdin is not a terminal). */
  readStdin?: () => Promise<string>
  /** Stdin itself, for `--input-format stream-json` (set only when it is not a terminal). */
  stdin?: NodeJS.ReadableStream
}

/** The terminal of an interactive run. */
export interface Terminal {
  stdin: NodeJS.ReadStream
  stdout: NodeJS.WriteStream
  stderr: NodeJS.WriteStream
}
