import { spawn } from 'node:child_process'
import type { SandboxRuntimeConfig } from '@anthropic-ai/sandbox-runtime'
import { errorMessage } from '@keel/base'
import { ToolError } from '@keel/tools'
import type { SandboxMode } from './events.js'

/** Codes of {@link SandboxError}. */
export type SandboxErrorCode =
  /** The OS sandbox could not wrap the command (bubblewrap missing or refused, bad profile). */
  | 'SANDBOX_WRAP_FAILED'
  /** A second composition in this process asked for a different network allow list. */
  | 'SANDBOX_CONFLICT'
  /**
   * The workspace holds more directories than the protected-folder scan visits, so not
   * every nested `.git`/`.keel` could be protected; the command did not run.
   */
  | 'SANDBOX_SCAN_LIMIT'

/** The OS sandbox could not run a command; the command did not run. */
export class SandboxError extends ToolError<SandboxErrorCode> {}

/** What the OS sandbox of one shell command allows. */
export interface CommandLimits {
  readonly mode: SandboxMode
  /** Real paths the command may write (ignored in `read_only`). */
  readonly writableRoots: readonly string[]
  /** Absolute paths never written, even under a writable root. */
  readonly denyWrite: readonly string[]
  /** Absolute paths never read (credentials). */
  readonly denyRead: readonly string[]
  /** Domains reachable through the sandbox's proxy; empty means no network. */
  readonly allowedDomains: readonly string[]
}

/**
 * The sandbox runtime is one per process (its proxies serve every wrapped command), so it is
 * shared: started on first use with the first allow list, kept while anyone holds it, and
 * stopped (its proxy servers closed, so the process can exit) when the last holder lets go.
 * Starting and stopping run one after the other.
 */
let initialized: { domains: string } | undefined
/**
 * The runtime's module (with node-forge and its own zod, ~1 MB of code), imported the first
 * time a command is probed or wrapped, so a run that never reaches the shell never loads it.
 */
let runtime: Promise<typeof import('@anthropic-ai/sandbox-runtime')> | undefined
async function sandboxManager() {
  runtime ??= import('@anthropic-ai/sandbox-runtime')
  return (await runtime).SandboxManager
}
let holders = 0
let lifecycle: Promise<unknown> = Promise.resolve()
let probe: Promise<OsSandboxStatus> | undefined

function serially<T>(step: () => Promise<T>): Promise<T> {
  const next = lifecycle.then(step)
  lifecycle = next.catch(() => undefined)
  return next
}

function ensureInitialized(allowedDomains: readonly string[]): Promise<void> {
  const domains = JSON.stringify([...allowedDomains].sort())
  return serially(async () => {
    if (initialized) {
      if (initialized.domains !== domains) {
        throw new SandboxError(
          'SANDBOX_CONFLICT',
          `the OS sandbox's network allow list is process-wide and is already ${initialized.domains}; this composition asks for ${domains}`,
          { current: initialized.domains, wanted: domains },
        )
      }
      return
    }
    const config: SandboxRuntimeConfig = {
      network: { allowedDomains: [...allowedDomains], deniedDomains: [] },
      filesystem: { denyRead: [], allowWrite: [], denyWrite: [] },
    }
    await (await sandboxManager()).initialize(config)
    initialized = { domains }
  })
}

/**
 * Holds the shared sandbox runtime (the approval plugin does so for its lifetime, a wrapped
 * command for its run). The returned function lets go; the last one out stops the runtime.
 */
export function holdOsSandbox(): () => Promise<void> {
  holders++
  let released = false
  return () => {
    if (released) return Promise.resolve()
    released = true
    holders--
    return serially(async () => {
      if (holders > 0 || !initialized) return
      initialized = undefined
      await (await sandboxManager()).reset()
    })
  }
}

function run(command: string): Promise<number | null> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', command], { stdio: 'ignore' })
    child.on('error', () => resolve(null))
    child.on('close', (code) => resolve(code))
  })
}

/** Whether the OS sandbox works here, and if not, why (shown to people deciding about a shell command). */
export interface OsSandboxStatus {
  readonly available: boolean
  readonly reason?: string
}

/**
 * Probes the OS sandbox once per process (bubblewrap on Linux, Seatbelt on macOS): the
 * platform is supported, the helpers are installed, and a probe command actually runs
 * wrapped.
 */
export function osSandboxStatus(): Promise<OsSandboxStatus> {
  probe ??= (async (): Promise<OsSandboxStatus> => {
    let SandboxManager: Awaited<ReturnType<typeof sandboxManager>>
    try {
      SandboxManager = await sandboxManager()
    } catch (error) {
      return {
        available: false,
        reason: `the OS sandbox runtime could not be loaded: ${errorMessage(error)}`,
      }
    }
    if (!SandboxManager.isSupportedPlatform()) {
      return { available: false, reason: `no OS sandbox is supported on ${process.platform}` }
    }
    const missing = SandboxManager.checkDependencies().errors
    if (missing.length > 0) return { available: false, reason: missing.join('; ') }
    try {
      const wrapped = await wrapCommand('true', {
        mode: 'read_only',
        writableRoots: [],
        denyWrite: [],
        denyRead: [],
        allowedDomains: initialized ? (JSON.parse(initialized.domains) as string[]) : [],
      })
      try {
        const code = await run(wrapped.command)
        return code === 0
          ? { available: true }
          : { available: false, reason: `a probe command in the OS sandbox exited with ${code}` }
      } finally {
        await wrapped.release()
      }
    } catch (error) {
      return { available: false, reason: errorMessage(error) }
    }
  })()
  return probe
}

/** Whether shell commands can run inside an OS sandbox here (see {@link osSandboxStatus}). */
export async function osSandboxAvailable(): Promise<boolean> {
  return (await osSandboxStatus()).available
}

/**
 * Wraps a command line so it runs inside the OS sandbox with `limits`. Call `release` once
 * the command has ended: it removes the sandbox's temporary mount points and lets go of the
 * runtime.
 */
export async function wrapCommand(
  command: string,
  limits: CommandLimits,
  options: { signal?: AbortSignal; id?: string } = {},
): Promise<{ command: string; release: () => Promise<void> }> {
  const letGo = holdOsSandbox()
  try {
    await ensureInitialized(limits.allowedDomains)
    const SandboxManager = await sandboxManager()
    const wrapped = await SandboxManager.wrapWithSandbox(
      command,
      'bash',
      {
        filesystem: {
          denyRead: [...limits.denyRead],
          allowWrite: limits.mode === 'read_only' ? [] : [...limits.writableRoots],
          denyWrite: [...limits.denyWrite],
        },
        network: { allowedDomains: [...limits.allowedDomains], deniedDomains: [] },
      },
      options.signal,
      options.id === undefined ? undefined : { commandId: options.id, commandText: command },
    )
    const release = async () => {
      SandboxManager.cleanupAfterCommand()
      await letGo()
    }
    return { command: wrapped, release }
  } catch (error) {
    await letGo()
    if (error instanceof SandboxError) throw error
    throw new SandboxError(
      'SANDBOX_WRAP_FAILED',
      `the OS sandbox could not wrap the command: ${errorMessage(error)}`,
      {},
      { cause: error },
    )
  }
}
