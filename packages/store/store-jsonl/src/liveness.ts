import { readFileSync, readlinkSync } from 'node:fs'

/**
 * Who a lock holder is, precisely enough to tell a live holder from a dead one whose pid
 * was reused: on Linux the boot id and the process start time (clock ticks since boot)
 * from `/proc`; elsewhere undefined, and only the pid is judged.
 */
export interface ProcessIdentity {
  pid: number
  /** `/proc/sys/kernel/random/boot_id`, or undefined where there is no `/proc`. */
  boot?: string
  /** Field 22 of `/proc/<pid>/stat` (start time since boot), or undefined. */
  start?: number
  /**
   * The pid namespace (`/proc/self/ns/pid`, e.g. `pid:[4026531836]`): two containers may
   * share a host name and boot id but not their pids. Undefined without `/proc`.
   */
  pidns?: string
}

/** This process's pid namespace, or undefined without `/proc`. */
export function pidNamespace(): string | undefined {
  try {
    return readlinkSync('/proc/self/ns/pid')
  } catch {
    // no /proc (not Linux): pids are judged without a namespace
    return undefined
  }
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    // no /proc (not Linux), or the process is gone: the caller falls back to the pid alone
    return undefined
  }
}

/** This boot's id, or undefined without `/proc`. */
export function bootId(): string | undefined {
  return readText('/proc/sys/kernel/random/boot_id')?.trim()
}

/** The start time of process `pid` since boot (clock ticks), or undefined when unknown. */
export function startTime(pid: number): number | undefined {
  const stat = readText(`/proc/${pid}/stat`)
  if (stat === undefined) return undefined
  // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so split after the last ')'
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const value = Number(fields[19])
  return Number.isSafeInteger(value) ? value : undefined
}

let self: Readonly<ProcessIdentity> | undefined

/** This process's identity (read from `/proc` once: none of it changes while the process runs). */
export function selfIdentity(): ProcessIdentity {
  self ??= readSelfIdentity()
  return { ...self }
}

function readSelfIdentity(): ProcessIdentity {
  const identity: ProcessIdentity = { pid: process.pid }
  const boot = bootId()
  const start = startTime(process.pid)
  const pidns = pidNamespace()
  if (boot !== undefined) identity.boot = boot
  if (start !== undefined) identity.start = start
  if (pidns !== undefined) identity.pidns = pidns
  return identity
}

/** Whether some process with this pid exists on this host. */
function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

/**
 * Whether the process a lock names still runs on this host: `dead` when the machine
 * rebooted since (boot id differs), the pid does not exist, or the pid now belongs to a
 * process that started at another time (pid reused, possibly by the caller itself);
 * `foreign` when it lives in another pid namespace (another container), which cannot be
 * judged from here.
 */
export function judge(holder: ProcessIdentity): 'alive' | 'dead' | 'foreign' {
  if (!Number.isSafeInteger(holder.pid) || holder.pid <= 0) return 'dead'
  const boot = bootId()
  if (holder.boot !== undefined && boot !== undefined && holder.boot !== boot) return 'dead'
  const pidns = pidNamespace()
  if (holder.pidns !== undefined && pidns !== undefined && holder.pidns !== pidns) return 'foreign'
  if (!pidExists(holder.pid)) return 'dead'
  if (holder.start !== undefined) {
    const now = startTime(holder.pid)
    if (now !== undefined && now !== holder.start) return 'dead'
  }
  return 'alive'
}
