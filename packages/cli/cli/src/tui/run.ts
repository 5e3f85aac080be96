import type { Agent } from '@keel/agent'
import { errorMessage } from '@keel/base'
import type { PresetAgent } from '@keel/presets'
import { render } from 'ink'
import { createElement as h } from 'react'
import type { Terminal } from '../commands.js'
import { App } from './app.js'
import type { Feed } from './feed.js'
import { runSlash } from './slash.js'

/** What {@link runInteractive} drives. */
export interface InteractiveOptions {
  readonly agent: Agent
  readonly built: PresetAgent
  readonly feed: Feed
  readonly terminal: Terminal
  readonly title: string
}

/**
 * Interactive `keel` over Ink: one turn at a time from the input line, slash commands,
 * approval prompts, Ctrl-C aborting the running turn and a second Ctrl-C leaving with 130.
 * Resolves with the exit code once the person leaves.
 */
export async function runInteractive(options: InteractiveOptions): Promise<number> {
  const { agent, built, feed, terminal } = options
  let exitCode = 0
  // Lines sent while a turn runs queue in the agent's inbox; Ctrl-C aborts them all.
  const running = new Set<AbortController>()
  const actions = {
    submit(line: string) {
      if (line.startsWith('/')) {
        feed.add('user', line)
        // A command is cancelled by Ctrl-C like a turn (its `command/done` then says so).
        const controller = new AbortController()
        running.add(controller)
        runSlash(line, { agent, built, signal: controller.signal })
          .then((text) => feed.add('info', text))
          .catch((error: unknown) => feed.add('error', errorMessage(error)))
          .finally(() => running.delete(controller))
        return
      }
      feed.add('user', line)
      const controller = new AbortController()
      running.add(controller)
      feed.busy(true)
      agent
        .send(line, { signal: controller.signal })
        .catch((error: unknown) => feed.add('error', errorMessage(error)))
        .finally(() => {
          running.delete(controller)
          if (running.size === 0) feed.busy(false)
        })
    },
    interrupt() {
      for (const controller of running) controller.abort()
    },
    exit(code: number) {
      exitCode = code
      for (const controller of running) controller.abort()
    },
  }
  const instance = render(h(App, { feed, actions, title: options.title }), {
    stdin: terminal.stdin,
    stdout: terminal.stdout,
    stderr: terminal.stderr,
    exitOnCtrlC: false,
    patchConsole: false,
  })
  await instance.waitUntilExit()
  await agent.idle().catch(() => undefined)
  return exitCode
}
