import type { AgentObserver, StoreHandle } from '@keel/agent'
import { errorMessage } from '@keel/base'
import type { LlmAdapter } from '@keel/llm'
import {
  checkForkUnder,
  createPresetAgent,
  findPreset,
  loadPresetReport,
  type PresetAgent,
  type PresetReport,
  resolveComposition,
} from '@keel/presets'
import type { Session } from '@keel/session'
import { DeferredSession } from './deferred-session.js'
import type { CliIo } from './io.js'
import { createJsonLines, OUTPUT_CAPABILITIES } from './json-output.js'
import { printModeNotices, runOneShot } from './one-shot.js'
import type { SessionChoice } from './open-session.js'
import { openWithPlugins } from './open-with-plugins.js'
import { pluginSearch } from './plugin-search.js'
import { loadReportedPresets } from './preset-report.js'
import { priceTable } from './pricing.js'
import { createRenderer, oneLine } from './render.js'
import type { agentOptions, InputFormat, Mode, Output } from './run.js'
import { applyStartModes } from './start-modes.js'
import type { SelectedStore } from './store.js'
import { createTerminalAnswerer } from './terminal-answerer.js'
import type { ParsedFlags } from './usage.js'

/** The system prompt of `keel` sessions (a preset may add to it). */
export const KEEL_SYSTEM_PROMPT =
  "You are Keel, a careful coding agent working in the user's workspace. Read before you edit, make the smallest change that does the job, check it (run the tests), and answer briefly."

/** A command line that passed every check (`run.ts`). */
export interface CheckedCommand {
  io: CliIo
  mode: Mode
  values: ParsedFlags<typeof agentOptions>['values']
  output: Output
  task: string | undefined
  inputFormat: InputFormat
  interactive: boolean
  llm: LlmAdapter
  selected: SelectedStore
  home: string
  invocation: string
  explicit: string | undefined
  last: boolean
  id: string | undefined
  atSeq: number | undefined
}

/**
 * Opens the session — a new one lazily (stored once a prompt gets through), or the one to
 * resume or fork, in its recorded directory — builds the preset's agent, and runs it
 * interactively or for one task. Returns the exit code.
 */
export async function openAndRun(c: CheckedCommand): Promise<number> {
  const { io, mode, values, selected, home, invocation, explicit, last, id, atSeq, task } = c
  let handle: StoreHandle
  let deferred: DeferredSession | undefined
  let cwd: string
  let notes: string[] = []
  let presets: PresetReport
  try {
    if (mode === 'new') {
      cwd = explicit ?? invocation
      presets = await loadReportedPresets(home, cwd, io, values.preset)
      const chosen = findPreset(presets.presets, values.preset ?? 'coding')
      const composition = resolveComposition(chosen.preset, {
        catalog: presets.catalog,
        source: chosen.source,
        ...(values.model === undefined ? {} : { model: values.model }),
      })
      // A task given up front titles the session (one-shot, -p); an interactive one is titled
      // by its first prompt, or by the model when the preset has @keel/session-title.
      deferred = new DeferredSession(
        selected.store,
        {
          cwd,
          agentPreset: composition.preset,
          agentComposition: composition,
          ...(task === undefined ? {} : { title: oneLine(task, 80) }),
        },
        selected.directoryOf,
      )
      handle = deferred
    } else {
      const choice: SessionChoice =
        mode === 'fork'
          ? { kind: 'fork', id: id!, ...(atSeq === undefined ? {} : { atSeq }) }
          : last
            ? { kind: 'last', dir: explicit ?? invocation }
            : { kind: 'resume', id: id! }
      const preset = values.preset
      // The plugin packages this directory's presets name, imported before the log is read:
      // their events register on import (said about on stderr below, once the directory is known).
      const here = await loadPresetReport(pluginSearch(home, explicit ?? invocation))
      const opened = await openWithPlugins(
        choice,
        selected,
        {
          invocation,
          ...(explicit === undefined ? {} : { explicit }),
          // A fork under another preset is refused before forking when that preset cannot read
          // the kept history (PRESET_SWITCH_UNKNOWN_EVENTS), so no unusable fork is left behind.
          ...(mode === 'fork' && preset !== undefined
            ? {
                beforeFork: async (parent: Session, dir: string) => {
                  const report = await loadReportedPresets(home, dir, io, preset)
                  const chosen = findPreset(report.presets, preset)
                  checkForkUnder(parent, chosen.preset, {
                    source: chosen.source,
                    catalog: report.catalog,
                    ...(atSeq === undefined ? {} : { atSeq }),
                  })
                },
              }
            : {}),
        },
        home,
        here.catalog,
      )
      ;({ handle, cwd, notes } = opened)
      try {
        presets = await loadReportedPresets(home, cwd, io, values.preset)
      } catch (error) {
        await handle.close()
        throw error
      }
    }
  } catch (error) {
    await selected.store.close()
    throw error
  }
  return runWith({ ...c, handle, deferred, cwd, notes, presets })
}

function describeComposition(built: PresetAgent, mode: Mode): string {
  const plugins = built.composition.plugins.map((p) => `${p.name}@${p.version}`).join(', ') || 'no plugins'
  const verb =
    built.origin === 'switched'
      ? 'switched to preset'
      : mode !== 'new'
        ? 'rebuilt the recorded preset'
        : 'preset'
  return `${verb} ${built.composition.preset}: ${plugins}; tools ${built.composition.tools.join(', ') || 'none'}`
}

interface Setup extends CheckedCommand {
  handle: StoreHandle
  deferred: DeferredSession | undefined
  cwd: string
  notes: string[]
  presets: PresetReport
}

async function runWith(s: Setup): Promise<number> {
  const { io, values, output } = s
  const print = values.print === true
  const stream = print && output === 'stream-json'
  const observers: AgentObserver[] = []
  const renderer =
    !print && !s.interactive ? createRenderer({ write: io.out, color: io.color === true }) : undefined
  if (renderer) observers.push(renderer)
  const lines = stream
    ? createJsonLines(io.out, { partial: values['include-partial-messages'] === true })
    : undefined
  if (lines) observers.push(lines.observer)
  if (print) observers.push(printModeNotices(io, output))
  // The whole interactive UI is imported at once, through the loader that sets the environment
  // Ink and the colour libraries judge at import (see tui/load.ts).
  const ui = s.interactive
    ? await (await import('./tui/load.js')).loadInteractiveUi({ color: io.color === true })
    : undefined
  const feed = ui ? new ui.Feed() : undefined
  if (feed) observers.push(feed.observer)
  // One-shot on a terminal asks the person at the terminal; print mode never asks (fails closed).
  const answerers = feed
    ? [feed.answerer]
    : !print && io.terminal
      ? [
          createTerminalAnswerer({
            input: io.terminal.stdin,
            output: io.terminal.stderr,
            // the question starts on a line of its own, not after streamed text
            ...(renderer ? { beforeQuestion: () => renderer.finish() } : {}),
          }),
        ]
      : []
  let built: PresetAgent
  try {
    built = await createPresetAgent({
      llm: s.llm,
      cwd: s.cwd,
      presets: s.presets.presets,
      catalog: s.presets.catalog,
      // a recorded plugin package no preset here names is found again by its name
      packages: pluginSearch(s.home, s.cwd),
      systemPrompt: KEEL_SYSTEM_PROMPT,
      observers,
      answerers,
      session: s.handle,
      // the store also holds the sessions of the subagents the agent starts
      store: s.selected.store,
      ...(values.preset !== undefined
        ? { preset: values.preset }
        : s.mode === 'new'
          ? { preset: 'coding' }
          : {}),
      ...(values.model === undefined ? {} : { model: values.model }),
      logger: (entry) => io.err(`keel: ${entry.code}: ${entry.message}\n`),
    })
  } catch (error) {
    await s.handle.close().catch(() => undefined)
    await s.selected.store.close()
    throw error
  }
  const agent = built.agent
  // An interactive session of a preset with @keel/session-title is titled by the model after
  // its first turn; any other is titled with its first prompt.
  if (
    s.deferred &&
    s.interactive &&
    built.composition.plugins.some((p) => p.name === '@keel/session-title')
  ) {
    s.deferred.titleFromPrompt = false
  }
  const modes: string[] = []
  try {
    // `--model` with a model-selection plugin is a logged switch (model/selection, kept by resume and fork).
    if (values.model !== undefined && agent.commands().some((c) => c.name === 'model')) {
      const answer = await agent.runCommand('model', values.model, { source: 'cli' })
      if (answer !== undefined && answer !== '') modes.push(answer)
    }
    modes.push(...(await applyStartModes(built, values)))
  } catch (error) {
    await agent.close().catch(() => undefined)
    await s.selected.store.close()
    throw error
  }
  const header = [
    ...s.notes,
    describeComposition(built, s.mode),
    ...built.notices.map((n) => `note: ${n}`),
    ...modes,
  ]
  if (!feed) for (const line of header) io.err(`keel: ${line}\n`)
  lines?.open(agent.session.id, {
    cwd: s.cwd,
    model: agent.model().model,
    preset: built.composition.preset,
    composition: built.composition,
    tools: agent.tools.map((t) => t.name),
    capabilities: [...OUTPUT_CAPABILITIES],
    input_format: s.inputFormat,
    include_partial_messages: values['include-partial-messages'] === true,
  })
  // The preset the session runs may price models its own way (`prices`).
  const prices = priceTable(s.presets.presets.find((p) => p.preset.id === built.composition.preset)?.preset)
  const closeStore = () => s.selected.store.close()
  if (ui) {
    try {
      return await ui.runInteractive({
        agent,
        built,
        feed: feed!,
        terminal: io.terminal!,
        color: io.color === true,
        header: [`session ${agent.session.id} · ${agent.model().model}`, ...header],
        resumed: s.mode !== 'new',
        home: s.home,
        cwd: s.cwd,
        prices,
        ...(io.signal ? { signal: io.signal } : {}),
        ...(s.deferred ? { deferred: s.deferred } : {}),
      })
    } finally {
      await agent.close().catch((error: unknown) => io.err(`keel: ${errorMessage(error)}\n`))
      await closeStore()
    }
  }
  if (s.inputFormat === 'stream-json') {
    const { runInputStream } = await import('./input-stream.js')
    return runInputStream({
      agent,
      io,
      stdin: io.stdin!,
      started: performance.timeOrigin,
      prices,
      ...(s.deferred ? { deferred: s.deferred } : {}),
      closeStore,
    })
  }
  return runOneShot({
    agent,
    io,
    task: s.task!,
    print: print ? output : undefined,
    started: performance.timeOrigin,
    prices,
    ...(renderer ? { finish: () => renderer.finish() } : {}),
    ...(s.deferred ? { deferred: s.deferred } : {}),
    closeStore,
  })
}
