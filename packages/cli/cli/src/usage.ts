import { type ParseArgsConfig, parseArgs } from 'node:util'
import { elide, errorMessage } from '@keel/base'

/**
 * A command line the user must change (exit code 2). The CLI prints it as one line,
 * `keel: <message> (see keel --help)`, or without the pointer when the message says all.
 */
export class UsageError extends Error {
  override readonly name = 'UsageError'
  /** Whether the line ends with a pointer to `keel --help` (not for a missing key: the message says what to set). */
  readonly showUsage: boolean

  constructor(message: string, options: { showUsage?: boolean } = {}) {
    super(message)
    this.showUsage = options.showUsage ?? true
  }
}

/**
 * How long the message of an error line may be: past it the middle is elided (a pasted
 * megabyte in a flag is not echoed back whole), keeping its start and its end, which names
 * the flag or what to do.
 */
export const ERROR_LINE_CHARS = 600

/** The one line a {@link UsageError} is shown as. */
export function usageLine(error: UsageError): string {
  const message = elide(error.message, ERROR_LINE_CHARS)
  return error.showUsage ? `keel: ${message} (see keel --help)` : `keel: ${message}`
}

type Options = NonNullable<ParseArgsConfig['options']>

/** What {@link parseFlags} returns for `options`. */
export type ParsedFlags<O extends Options> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: boolean; strict: true }>
>

/**
 * `parseArgs` (strict) with its errors turned into one-line {@link UsageError}s that name
 * the flag and the command (`keel sessions show: unknown option --frob; did you mean
 * --json?`), instead of Node's own wording and hints.
 */
export function parseFlags<const O extends Options>(
  command: string,
  argv: readonly string[],
  options: O,
  allowPositionals = true,
): ParsedFlags<O> {
  try {
    return parseArgs({ args: [...argv], options, allowPositionals, strict: true })
  } catch (error) {
    const problem = describeParseError(error, options)
    throw new UsageError(command === 'keel' ? problem : `${command}: ${problem}`)
  }
}

function describeParseError(error: unknown, options: Options): string {
  const code = (error as { code?: string }).code
  const message = errorMessage(error)
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const flag = /^Unknown option '([^']*)'/u.exec(message)?.[1] ?? '?'
    const names = Object.keys(options).map((name) => `--${name}`)
    const near = closest(flag.replace(/=.*$/u, ''), names)
    return `unknown option ${flag}${near ? `; did you mean ${near}?` : ''}`
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const flag = /^Option '(?:-\w, )?(--[\w-]+)/u.exec(message)?.[1] ?? 'an option'
    // "ambiguous": the next argument starts with a dash (`--at -1`), which parseArgs never takes as a value
    if (/ambiguous/u.test(message))
      return `${flag} needs a value (one that starts with "-" is written ${flag}=<value>)`
    return /argument missing/u.test(message) ? `${flag} needs a value` : `${flag} takes no value`
  }
  if (code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
    const arg = /^Unexpected argument '([^']*)'/u.exec(message)?.[1] ?? '?'
    return `unexpected argument ${JSON.stringify(arg)}`
  }
  return message
}

/**
 * Edit distance with adjacent transpositions (optimal string alignment), for "did you
 * mean" suggestions. Bounded by the inputs: only short command words are compared.
 */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1
  const cols = b.length + 1
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  )
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1)
      d[i]![j] = best
    }
  }
  return d[a.length]![b.length]!
}

/**
 * The candidate `word` most likely mistypes: one edit away, or two keeping the word's
 * first letter and length (`frob` → `fork`); words of up to three letters only one.
 */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  if (word.length > 40) return undefined
  const bare = word.replace(/^-+/u, '')
  let best: { name: string; distance: number } | undefined
  for (const name of candidates) {
    const distance = editDistance(word, name)
    const near =
      distance <= 1 ||
      (distance === 2 &&
        bare.length > 3 &&
        word.length === name.length &&
        word[0] === name[0] &&
        word !== name)
    if (near && distance > 0 && (best === undefined || distance < best.distance)) best = { name, distance }
  }
  return best?.name
}

/** The commands a lone first word may name (see `refuseTypo` in `run.ts` for the typo rule). */
export const COMMANDS = ['demo', 'fork', 'help', 'mcp', 'presets', 'resume', 'sessions', 'version'] as const

export const USAGE = `usage: keel [flags] ["task"]          interactive, or one-shot with a task
       keel -p "task" [--output text|json|stream-json]   for scripts (stdout: only the answer / JSON)
       keel -p --input-format stream-json --output stream-json [--include-partial-messages]
                                         a driving program writes user messages as JSON lines on stdin
       keel -c | --continue ["task"]     continue the last session of this directory
       keel resume <id>|--last ["task"]  continue a session with its recorded preset, in its directory
       keel fork <id> [--at seq] ["task"]  a new session from a prefix of another
       keel sessions list [--cwd dir] [--limit n] [--json]   newest activity first
       keel sessions show <id> [--json]
       keel sessions export <id> --html [-o file]
       keel sessions verify <id> [--json]  replay it all, check its integrity and its checkpoint
       keel sessions unlock <id>          remove a stale writer lock (JSONL; e.g. one held on another host)
       keel presets list | keel presets show <id>
       keel mcp list [--preset id] [--project] [--tools]   MCP servers: state and tools
       keel demo [--live "task"]         the scripted demo (no key, no network)
       keel --version

flags: --preset id (default coding)  --model id  --base-url url  --store jsonl|postgres
       --cwd dir (must exist)  --idle-timeout 30s (a silent model stream ends; default 5m)
       --plan (start in plan mode)  --permissions read-only|ask-always|auto-edit|full-access
       --include-partial-messages (stream-json: text and reasoning deltas as stream_event lines)
       --input-format text|stream-json (the JSON lines are in docs/stream-json.md)
stdin: piped text is the task, or is put before it as context (echo ctx | keel -p "q")
env:   DEEPSEEK_API_KEY (needed unless --base-url), DEEPSEEK_BASE_URL, KEEL_HOME (default ~/.keel),
       KEEL_STORE, KEEL_PG_URL, KEEL_IDLE_TIMEOUT_MS
exit:  0 ok, 1 runtime or API error, 2 usage or configuration (incl. a missing key),
       129 SIGHUP, 130 interrupted (Ctrl-C), 143 SIGTERM
Without -p, a task of one word that looks like a mistyped command (keel frob, keel list) is
refused with a suggestion; keel -- frob sends the word to the model. Flags may come before
a command (keel --store postgres sessions list); words after -- are always the task.`
