import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import type { AgentObserver, StoreHandle, TurnResult } from '@keel/agent'
import { checkForkUnder, createPresetAgent, findPreset, loadPresets, type PresetAgent } from '@keel/presets'
import type { SessionEvent } from '@keel/session'
import { keelHome } from '@keel/store-jsonl'
import type { CliIo } from './commands.js'
import { createJsonLines, jsonLine, OUTPUT_CAPABILITIES, resultObject } from './json-output.js'
import { selectLlm, UsageError } from './llm.js'
import { createRenderer } from './render.js'
import { type SelectedStore, selectStore } from './store.js'
import { createTerminalAnswerer } from './terminal-answerer.js'

/** The system prompt of `keel` sessions (a preset may add to it). */
export const KEEL_SYSTEM_PROMPT =
  "You are Keel, a careful coding agent working in the user's workspace. Read before you edit, make the smallest change that does the job, check it (run the tests), and answer briefly."

/** Flags shared by `keel [task]`, `keel resume` and `keel fork`. */
export const agentOptions = {
  preset: { type: 'string' },
  model: { type: 'string' },
  'base-url': { type: 'string' },
  store: { type: 'string' },
  cwd: { type: 'string' },
  print: { type: 'boolean', short: 'p' },
  output: { type: 'string' },
  last: { type: 'boolean' },
  at: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const

type Mode = 'new' | 'resume' | 'fork'
type Output = 'text' | 'json' | 'stream-json'

function parse(argv: readonly string[]) {
  try {
    return parseArgs({ args: [...argv], options: agentOptions, allowPositionals: true, strict: true })
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
}

/** Opens the session the command names: a new one later (undefined), the one to resume, or a fresh fork. */
async function openSession(
  mode: Mode,
  positionals: string[],
  values: ReturnType<typeof parse>['values'],
  selected: SelectedStore,
  cwd: string,
  presets: Awaited<ReturnType<typeof loadPresets>>,
): Promise<{ handle?: StoreHandle; task?: string; note?: string }> {
  if (mode === 'new') {
    if (values.last || values.at !== undefined)
      throw new UsageError('--last and --at belong to keel resume and keel fork')
    return positionals.length > 0 ? { task: positionals.join(' ') } : {}
  }
  if (mode === 'resume') {
    let id: string | undefined
    let rest = positionals
    if (values.last) {
      const newest = (await selected.store.list({ cwd, limit: 1 }))[0]
      if (!newest)
        throw new UsageError(`no session was started in ${cwd} yet; keel sessions list shows them all`)
      id = newest.id
    } else {
      id = positionals[0]
      rest = positionals.slice(1)
      if (id === undefined)
        throw new UsageError('usage: keel resume <id> ["task"] | keel resume --last ["task"]')
    }
    const handle = await selected.store.open(id)
    const notices = handle.notices.map((n) => `; store notice ${n.code}: ${n.message}`).join('')
    return {
      handle,
      ...(rest.length > 0 ? { task: rest.join(' ') } : {}),
      note: `resumed session ${id}${notices}`,
    }
  }
  const id = positionals[0]
  if (id === undefined) throw new UsageError('usage: keel fork <id> [--at seq] ["task"]')
  const atSeq = values.at === undefined ? undefined : Number(values.at)
  if (atSeq !== undefined && (!Number.isInteger(atSeq) || atSeq < 0)) {
    throw new UsageError(`--at must be a seq (a non-negative integer), got ${values.at}`)
  }
  if (values.preset !== undefined) {
    // Refused before forking (PRESET_SWITCH_UNKNOWN_EVENTS), so no unusable fork is left behind.
    const { preset, source } = findPreset(presets, values.preset)
    checkForkUnder(await selected.store.load(id), preset, {
      source,
      ...(atSeq === undefined ? {} : { atSeq }),
    })
  }
  const handle = await selected.store.fork(id, atSeq === undefined ? {} : { atSeq })
  const rest = positionals.slice(1)
  return {
    handle,
    ...(rest.length > 0 ? { task: rest.join(' ') } : {}),
    note: `forked session ${id}${atSeq === undefined ? '' : ` at seq ${atSeq}`} into ${handle.session.id}`,
  }
}

function describeComposition(built: PresetAgent): string {
  const plugins = built.composition.plugins.map((p) => `${p.name}@${p.version}`).join(', ') || 'no plugins'
  const verb =
    built.origin === 'rebuilt'
      ? 'rebuilt the recorded preset'
      : built.origin === 'switched'
        ? 'switched to preset'
        : 'preset'
  return `${verb} ${built.composition.preset}: ${plugins}; tools ${built.composition.tools.join(', ') || 'none'}`
}

/** `keel [task]`, `keel resume …`, `keel fork …`: returns the exit code. */
export async function runAgentCommand(mode: Mode, argv: readonly string[], io: CliIo): Promise<number> {
  const { values, positionals } = parse(argv)
  const output = (values.output ?? 'text') as Output
  if (!['text', 'json', 'stream-json'].includes(output)) {
    throw new UsageError(`--output must be text, json or stream-json, got ${values.output}`)
  }
  if (values.output !== undefined && !values.print) throw new UsageError('--output needs -p (print mode)')
  const cwd = resolve(values.cwd ?? io.cwd ?? process.cwd())
  const llm = selectLlm({ baseUrl: values['base-url'], model: values.model }, io.env)
  const home = keelHome(io.env as NodeJS.ProcessEnv)
  const presets = await loadPresets({ keelHome: home, projectDir: cwd })
  if (values.preset !== undefined) findPreset(presets, values.preset)
  let selected: SelectedStore
  try {
    selected = selectStore(values.store, io.env)
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  const started = Date.now()
  let opened: Awaited<ReturnType<typeof openSession>>
  try {
    opened = await openSession(mode, positionals, values, selected, cwd, presets)
  } catch (error) {
    await selected.store.close()
    throw error
  }
  if (values.print && opened.task === undefined) {
    await opened.handle?.close()
    await selected.store.close()
    throw new UsageError('-p needs a task: keel -p "what to do"')
  }
  const interactive = opened.task === undefined
  if (interactive && !io.terminal) {
    await opened.handle?.close()
    await selected.store.close()
    throw new UsageError(
      'interactive keel needs a terminal; give a task (keel "task", or keel -p "task" for scripts)',
    )
  }
  const stream = values.print && output === 'stream-json'
  const observers: AgentObserver[] = []
  const renderer =
    !values.print && !interactive ? createRenderer({ write: io.out, color: io.color === true }) : undefined
  if (renderer) observers.push(renderer)
  const lines = stream ? createJsonLines(io.out) : undefined
  if (lines) observers.push(lines.observer)
  if (values.print && output === 'text')
    observers.push({ onDisplay: (n) => io.err(`[${n.source}] ${n.text}\n`) })
  const feed = interactive ? new (await import('./tui/feed.js')).Feed() : undefined
  if (feed) observers.push(feed.observer)
  // One-shot on a terminal asks the person at the terminal; print mode never asks (fails closed).
  const answerers = feed
    ? [feed.answerer]
    : !values.print && io.terminal
      ? [createTerminalAnswerer({ input: io.terminal.stdin, output: io.terminal.stderr })]
      : []
  let built: PresetAgent
  try {
    built = await createPresetAgent({
      llm,
      cwd,
      presets,
      systemPrompt: KEEL_SYSTEM_PROMPT,
      observers,
      answerers,
      ...(opened.handle
        ? { session: opened.handle }
        : { store: selected.store, title: opened.task?.slice(0, 80) ?? 'keel' }),
      ...(values.preset !== undefined
        ? { preset: values.preset }
        : opened.handle
          ? {}
          : { preset: 'coding' }),
      ...(values.model === undefined ? {} : { model: values.model }),
    })
  } catch (error) {
    await opened.handle?.close()
    await selected.store.close()
    throw error
  }
  const agent = built.agent
  // `--model` with a model-selection plugin is a logged switch (model/selection, kept by resume and fork).
  if (values.model !== undefined && agent.commands().some((c) => c.name === 'model')) {
    try {
      await agent.runCommand('model', values.model, { source: 'cli' })
    } catch (error) {
      await agent.close()
      await selected.store.close()
      throw error
    }
  }
  const sessionId = agent.session.id
  const info = (text: string) => io.err(`${text}\n`)
  const header = [
    ...(opened.note ? [opened.note] : []),
    describeComposition(built),
    ...built.notices.map((n) => `note: ${n}`),
  ]
  if (!feed) for (const line of header) info(`keel: ${line}`)
  if (lines) {
    lines.open(sessionId, {
      cwd,
      model: llm.model,
      preset: built.composition.preset,
      composition: built.composition,
      tools: agent.tools.map((t) => t.name),
      capabilities: OUTPUT_CAPABILITIES,
    })
  }
  if (interactive) {
    const { runInteractive } = await (await import('./tui/load.js')).loadInteractiveUi()
    const title = `keel · session ${sessionId} · ${llm.model} · ${header.join(' · ')}\n/help for commands, Ctrl-C interrupts, Ctrl-C twice exits`
    try {
      return await runInteractive({ agent, built, feed: feed!, terminal: io.terminal!, title })
    } finally {
      await agent.close()
      await selected.store.close()
    }
  }
  const before = agent.session.events.length
  let result: TurnResult | undefined
  let failure: { code: string; message: string } | undefined
  try {
    result = await agent.send(opened.task!, io.signal ? { signal: io.signal } : {})
    renderer?.finish()
  } catch (error) {
    failure = { code: (error as { code?: string }).code ?? 'INTERNAL', message: (error as Error).message }
  } finally {
    await agent.close().catch((error: unknown) => {
      failure ??= { code: 'CLOSE_FAILED', message: (error as Error).message }
    })
    await selected.store.close()
  }
  const turnEvents: readonly SessionEvent[] = agent.session.events.slice(before)
  const code = exitCodeOf(result, failure, io.signal)
  if (values.print && output !== 'text') {
    io.out(jsonLine(resultObject(sessionId, result, turnEvents, Date.now() - started, failure)))
  } else if (values.print) {
    if (result?.text) io.out(`${result.text}\n`)
  }
  if (failure) info(`keel: ${failure.code}: ${failure.message}`)
  else if (result && result.reason !== 'completed') {
    info(
      `keel: the turn ended ${result.reason}${result.error ? `: ${result.error.code} ${result.error.message}` : ''}`,
    )
  }
  info(`keel: session ${sessionId} (keel resume ${sessionId})`)
  return code
}

function exitCodeOf(
  result: TurnResult | undefined,
  failure: unknown,
  signal: AbortSignal | undefined,
): number {
  if (signal?.aborted) return 130
  if (failure || !result) return 1
  return result.reason === 'completed' ? 0 : 1
}
