import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { errorMessage } from '@keel/base'
import { createDeepSeekAdapter } from '@keel/deepseek'
import { createPresetAgent } from '@keel/presets'
import { type ScriptedServer, startScriptedServer } from '@keel/scripted-server'
import type { SessionEvent } from '@keel/session'
// The demo reads the coding preset's `sandbox.limits` service (types only).
import type {} from '@keel/user-approval'
import {
  demoAnswer,
  demoScript,
  demoSystemPrompt,
  demoTask,
  type TestOutcome,
  testOutcome,
  writeDemoWorkspace,
} from './demo-task.js'
import type { Terminal } from './io.js'
import { checkDirectory } from './open-session.js'
import { createRenderer, oneLine, type RenderTarget } from './render.js'
import { selectStore } from './store.js'
import { createTerminalAnswerer } from './terminal-answerer.js'
import { parseFlags } from './usage.js'

/** What {@link runDemo} reads and where it writes. */
export interface DemoIo {
  argv: readonly string[]
  env: Readonly<Record<string, string | undefined>>
  out: RenderTarget
  err(text: string): void
  /** Aborts the running turn (the entry wires Ctrl-C to it). */
  signal?: AbortSignal
  /** On a terminal, approval questions are asked there. */
  terminal?: Terminal
}

/** What a demo run produced, for callers that go on inspecting it. */
export interface DemoOutcome {
  exitCode: number
  sessionId?: string
  sessionFile?: string
  workspace?: string
  home?: string
}

const usage = `usage: pnpm demo [--live "task"] [--model id] [--cwd dir] [--store jsonl|postgres]

Runs a Keel agent with the fs and shell tools end to end and prints the conversation.

  (no flags)      a scripted model on a local server (no network, no key): it reads a
                  file, fixes a bug, runs the test and answers
  --live "task"   the same agent talks to DeepSeek (needs DEEPSEEK_API_KEY; DEEPSEEK_BASE_URL
                  points it at any OpenAI-compatible endpoint)
  --model id      model id for --live (default deepseek-v4-flash)
  --cwd dir       workspace for --live (default: a fresh temp copy of the demo files)
  --store kind    jsonl (default) or postgres (needs KEEL_PG_URL); also KEEL_STORE

With the JSONL store the session log goes to $KEEL_HOME (default for the demo: a fresh
temp directory).`

/**
 * The demo: an agent with the fs and shell tools in a temporary workspace, logging to the
 * JSONL store, talking to the scripted local server through the real `openai` client (or
 * to DeepSeek with `--live`). Returns the exit code: 0 when the turn completed — and, for
 * the scripted task, when the log shows `node test.mjs` passed (a refused or failed test
 * run is 1, whatever the model said).
 */
export async function runDemo(io: DemoIo): Promise<DemoOutcome> {
  let args: ReturnType<typeof parse>['values']
  try {
    args = parse(io.argv).values
    if (args.cwd !== undefined) await checkDirectory(resolve(args.cwd), '--cwd')
  } catch (error) {
    io.err(`${errorMessage(error)} (pnpm demo --help lists the options)\n`)
    return { exitCode: 2 }
  }
  if (args.help) {
    io.out.write(`${usage}\n`)
    return { exitCode: 0 }
  }
  const live = args.live
  if (live !== undefined && !io.env.DEEPSEEK_API_KEY) {
    io.err(
      '--live talks to DeepSeek and needs DEEPSEEK_API_KEY in the environment; run without --live for the offline demo.\n',
    )
    return { exitCode: 2 }
  }
  if (live !== undefined && live.trim() === '') {
    io.err('--live needs a task, e.g. --live "add a --verbose flag to cli.mjs"\n')
    return { exitCode: 2 }
  }

  const home =
    io.env.KEEL_HOME && io.env.KEEL_HOME !== ''
      ? io.env.KEEL_HOME
      : await mkdtemp(join(tmpdir(), 'keel-demo-home-'))
  let workspace: string
  if (args.cwd !== undefined) workspace = resolve(args.cwd)
  else {
    workspace = await mkdtemp(join(tmpdir(), 'keel-demo-workspace-'))
    await writeDemoWorkspace(workspace)
  }

  let server: ScriptedServer | undefined
  let llm: ReturnType<typeof createDeepSeekAdapter>
  if (live === undefined) {
    server = await startScriptedServer({ script: demoScript, handler: demoAnswer })
    // `env: {}`: the scripted run ignores DEEPSEEK_* variables, so it can never reach the network.
    llm = createDeepSeekAdapter({ baseURL: server.baseURL, model: 'scripted-demo', env: {} })
  } else {
    llm = createDeepSeekAdapter({ env: { ...io.env }, ...(args.model ? { model: args.model } : {}) })
  }

  let selected: Awaited<ReturnType<typeof selectStore>>
  try {
    selected = await selectStore(args.store, io.env, home)
  } catch (error) {
    await server?.close()
    io.err(`${errorMessage(error)}\n`)
    return { exitCode: 2 }
  }
  const store = selected.store
  const out = io.out
  const paint = (code: string, text: string) => (out.color ? `\x1b[${code}m${text}\x1b[0m` : text)
  out.write(
    `${paint('1', 'Keel demo')}: ${live === undefined ? `scripted model at ${server!.url} (local, no network)` : `DeepSeek (${llm.model})`}\n`,
  )
  out.write(`  workspace  ${workspace}\n`)
  out.write(
    selected.kind === 'jsonl'
      ? `  KEEL_HOME  ${home}${io.env.KEEL_HOME ? '' : ' (temporary; set KEEL_HOME to keep sessions elsewhere)'}\n`
      : `  store      ${selected.where}\n`,
  )
  const renderer = createRenderer(out)
  let exitCode = 1
  let events: readonly SessionEvent[] = []
  let sessionId = ''
  try {
    // The `coding` preset: approval (shell commands in the OS sandbox), hooks, compaction,
    // todo, schedule, fs and shell. On a terminal a person answers what approval asks.
    const { agent, composition } = await createPresetAgent({
      preset: 'coding',
      store,
      title: live === undefined ? 'keel demo' : 'keel demo (live)',
      llm,
      cwd: workspace,
      systemPrompt: demoSystemPrompt,
      maxSteps: 20,
      observers: [renderer],
      logger: (entry) => io.err(`keel: ${entry.code}: ${entry.message}\n`),
      answerers: io.terminal
        ? [createTerminalAnswerer({ input: io.terminal.stdin, output: io.terminal.stderr })]
        : [],
      retry: live === undefined ? { maxRetries: 2, baseDelayMs: 50, maxDelayMs: 500 } : {},
    })
    sessionId = agent.session.id
    // The coding preset runs shell commands inside the OS sandbox; without one they need a
    // person's approval. Say so up front rather than let a refused command surprise the reader.
    const sandbox = await agent.services.get('sandbox.limits')?.status()
    if (sandbox && !sandbox.available) {
      out.write(
        `  sandbox    ${paint('33', `no OS sandbox (${sandbox.reason})`)}: shell commands need approval${io.terminal ? ' (you will be asked)' : ' and are refused without a terminal'}; install bubblewrap and socat (Debian: apt-get install bubblewrap socat)\n`,
      )
    }
    out.write(
      `  preset     coding: ${composition.plugins.map((p) => p.name).join(', ')}; tools ${composition.tools.join(', ')}\n\n`,
    )
    try {
      const result = await agent.send(live ?? demoTask, io.signal ? { signal: io.signal } : {})
      renderer.finish()
      exitCode = result.reason === 'completed' ? 0 : 1
    } finally {
      await agent.close()
    }
    // Read back what the store holds (not the in-memory session): the summary shows what was persisted.
    events = (await store.load(sessionId)).events
  } finally {
    await store.close()
    await server?.close()
  }

  let input = 0
  let output = 0
  let cached = 0
  for (const event of events) {
    if (event.type !== 'assistant/message' || !event.data.usage) continue
    input += event.data.usage.inputTokens
    output += event.data.usage.outputTokens
    cached += event.data.usage.cacheHitTokens ?? 0
  }
  out.write(
    `\n  tokens     ${input} in (${cached} from cache), ${output} out${live === undefined ? ' (scripted)' : ''}\n`,
  )
  if (live === undefined) {
    // What the log says the test did — not what the model said about it.
    const outcome = recordedTestOutcome(events)
    const said: string =
      outcome.kind === 'passed'
        ? `node test.mjs passed (${outcome.line})`
        : outcome.kind === 'failed'
          ? `node test.mjs failed (${outcome.line})`
          : outcome.kind === 'not-run'
            ? `node test.mjs did not run (${outcome.line}): the fix is untested`
            : 'node test.mjs was never run: the fix is untested'
    out.write(`  outcome    ${outcome.kind === 'passed' ? paint('32', said) : paint('33', said)}\n`)
    if (outcome.kind !== 'passed') exitCode = 1
  }
  const sessionFile = selected.logOf(sessionId)
  out.write(`  session    ${sessionId} (${events.length} events)\n`)
  out.write(`  log        ${sessionFile}\n`)
  const keel = fileURLToPath(new URL('../bin/keel.js', import.meta.url))
  const prefix = selected.kind === 'jsonl' && !io.env.KEEL_HOME ? `KEEL_HOME=${home} ` : ''
  const storeFlag = selected.kind === 'jsonl' ? '' : ` --store ${selected.kind}`
  out.write(`  inspect    ${prefix}node ${keel} sessions show ${sessionId}${storeFlag}\n`)
  return { exitCode, sessionId, sessionFile, workspace, home }
}

/** The outcome of the last `bash` call in a demo log (a refusal counts as not run, with its code). */
function recordedTestOutcome(events: readonly SessionEvent[]): TestOutcome {
  const result = [...events]
    .reverse()
    .find((e) => e.type === 'tool/result' && e.data.message.toolName === 'bash')
  if (result?.type !== 'tool/result') return { kind: 'missing' }
  const text = result.data.message.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n')
  const outcome = testOutcome(text)
  if (result.data.errorCode && outcome.kind !== 'failed') {
    const why = outcome.kind === 'not-run' ? outcome.line : text
    return { kind: 'not-run', line: `${result.data.errorCode}: ${oneLine(why, 140)}` }
  }
  return outcome
}

function parse(argv: readonly string[]) {
  return parseFlags(
    'pnpm demo',
    argv,
    {
      live: { type: 'string' },
      model: { type: 'string' },
      cwd: { type: 'string' },
      store: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    false,
  )
}
