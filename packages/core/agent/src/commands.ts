import { elide, errorMessage, isKeelError } from '@keel/base'
import type { Session } from '@keel/session'
import { AgentError } from './errors.js'
import type { PluginCommand } from './plugin.js'

/** A registered command and the plugin that offers it. */
export interface RegisteredCommand extends PluginCommand {
  readonly name: string
  readonly plugin: string
}

/** What a command list shows. */
export type CommandSummary = Pick<RegisteredCommand, 'name' | 'description' | 'plugin' | 'usage'>

const commandNamePattern = /^[a-z][a-z0-9-]{0,63}$/

/** Longest `command/done.text` kept in the log; a command's whole answer still reaches its caller. */
export const MAX_COMMAND_TEXT = 4000

/** The commands of one agent: the only registry (a UI lists and runs these, knowing no plugin). */
export class CommandRegistry {
  readonly #commands = new Map<string, RegisteredCommand>()

  /** Adds `plugin`'s command; `COMMAND_INVALID` for a bad or taken name. */
  register(plugin: string, name: string, command: PluginCommand): void {
    if (!commandNamePattern.test(name)) {
      throw new AgentError(
        'COMMAND_INVALID',
        `plugin '${plugin}' registered command ${JSON.stringify(name)}: a command name is lower-case letters, digits and '-', starting with a letter`,
        { plugin, command: name },
      )
    }
    const taken = this.#commands.get(name)
    if (taken) {
      throw new AgentError(
        'COMMAND_INVALID',
        `plugin '${plugin}' registered command '${name}', which plugin '${taken.plugin}' already registered`,
        { plugin, command: name },
      )
    }
    const entry: RegisteredCommand = {
      name,
      plugin,
      description: command.description,
      run: (args, info) => command.run(args, info),
      ...(command.usage === undefined ? {} : { usage: command.usage }),
    }
    this.#commands.set(name, entry)
  }

  /** The command named `name`; `COMMAND_UNKNOWN` (the name elided, the known ones listed) for none. */
  get(name: string): RegisteredCommand {
    const command = this.#commands.get(name)
    if (command) return command
    const known = [...this.#commands.keys()].join(', ') || '(none)'
    throw new AgentError('COMMAND_UNKNOWN', `no command named '${elide(name)}'; commands: ${known}`, {
      command: elide(name),
    })
  }

  /** In registration order. */
  list(): CommandSummary[] {
    return [...this.#commands.values()].map(({ name, description, plugin, usage }) =>
      usage === undefined ? { name, description, plugin } : { name, description, plugin, usage },
    )
  }
}

/** One logged run's request. */
export interface CommandRequest {
  readonly name: string
  readonly args: string
  readonly source: string
  readonly signal: AbortSignal
}

function cut(text: string): string {
  return text.length <= MAX_COMMAND_TEXT
    ? text
    : `${text.slice(0, MAX_COMMAND_TEXT)}… [${text.length - MAX_COMMAND_TEXT} more characters]`
}

/**
 * Runs a command as a logged act: `command/run`, the handler, then exactly one
 * `command/done` — `success` with its answer, or `error` when it threw or the signal
 * fired first (the handler is told through the same signal). Resolves with the answer;
 * rejects with the handler's `KeelError`, `COMMAND_FAILED` (cause attached) or
 * `COMMAND_ABORTED`, after `command/done` is logged.
 */
export async function runLoggedCommand(
  session: Session,
  command: RegisteredCommand,
  request: CommandRequest,
): Promise<string | undefined> {
  const commandId = `cmd-${session.events.length}`
  session.append('command/run', {
    commandId,
    name: command.name,
    ...(request.args === '' ? {} : { args: request.args }),
    source: request.source,
  })
  let onAbort = () => {}
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () =>
      reject(
        new AgentError('COMMAND_ABORTED', `command '${command.name}' was cancelled`, {
          command: command.name,
          plugin: command.plugin,
        }),
      )
    if (request.signal.aborted) onAbort()
    else request.signal.addEventListener('abort', onAbort, { once: true })
  })
  aborted.catch(() => {})
  let answer: string | undefined
  try {
    const returned = await Promise.race([
      Promise.resolve().then(() =>
        command.run(request.args, { signal: request.signal, source: request.source }),
      ),
      aborted,
    ])
    answer = typeof returned === 'string' ? returned : undefined
  } catch (thrown) {
    const error = isKeelError(thrown)
      ? thrown
      : new AgentError(
          'COMMAND_FAILED',
          `command '${command.name}' of plugin '${command.plugin}' failed: ${errorMessage(thrown)}`,
          { command: command.name, plugin: command.plugin },
          { cause: thrown },
        )
    session.append('command/done', {
      commandId,
      kind: 'error',
      text: cut(error.message),
      errorCode: error.code,
    })
    throw error
  } finally {
    request.signal.removeEventListener('abort', onAbort)
  }
  session.append('command/done', {
    commandId,
    kind: 'success',
    ...(answer === undefined ? {} : { text: cut(answer) }),
  })
  return answer
}

/**
 * {@link runLoggedCommand}, settling only once `flush` made the run and its outcome durable,
 * failed or not: what the person is told happened must survive a crash after the answer.
 */
export async function runDurableCommand(
  session: Session,
  command: RegisteredCommand,
  request: CommandRequest,
  flush: () => Promise<void>,
): Promise<string | undefined> {
  let answer: string | undefined
  try {
    answer = await runLoggedCommand(session, command, request)
  } catch (error) {
    await flush()
    throw error
  }
  await flush()
  return answer
}
