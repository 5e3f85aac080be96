// A throwaway PostgreSQL cluster for fault tests: its own data directory and a free loopback
// port, started by the test, then stopped, restarted, frozen (SIGSTOP) and thawed by it, and
// removed afterwards. The shared server of KEEL_PG_URL is never touched: other tests use it.
//
// Root cannot run postgres, so as root the cluster runs as the `postgres` user (via
// `runuser`); otherwise as the current user. A watchdog process removes the cluster if this
// process dies without cleaning up (a killed test worker), so no server or directory is left.
import { execFile, spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { chown } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'

const run = promisify(execFile)

/** The newest PostgreSQL binaries of the Debian layout, or why there are none. */
function findBin(): { bin: string } | { missing: string } {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return { missing: `${root} does not exist (install the postgresql package)` }
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')) && existsSync(join(root, v, 'bin', 'pg_ctl')))
    .sort((a, b) => Number(b) - Number(a))
  if (versions.length === 0) return { missing: `no initdb/pg_ctl under ${root}/*/bin` }
  return { bin: join(root, versions[0]!, 'bin') }
}

const isRoot = process.getuid?.() === 0

/** The uid/gid of `postgres`, when this process is root and must drop to it. */
async function serverUser(): Promise<{ uid: number; gid: number } | undefined> {
  if (!isRoot) return undefined
  const [{ stdout: uid }, { stdout: gid }] = await Promise.all([
    run('id', ['-u', 'postgres']),
    run('id', ['-g', 'postgres']),
  ])
  return { uid: Number(uid.trim()), gid: Number(gid.trim()) }
}

/** Why throwaway clusters cannot run here (undefined: they can). */
export function clusterUnavailable(): string | undefined {
  const found = findBin()
  if ('missing' in found) return found.missing
  if (isRoot && !/^postgres:/m.test(readFileSync('/etc/passwd', 'utf8'))) {
    return 'running as root and there is no postgres user to run the server as'
  }
  return undefined
}

/** A free TCP port on 127.0.0.1 (free when asked; the start retries if it is taken meanwhile). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      )
    })
  })
}

/** The pids of the processes whose parent is `pid` (from /proc). */
function childrenOf(pid: number): number[] {
  const out: number[] = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8')
      // pid (comm) state ppid …; comm may hold spaces and parentheses: split after the last ')'
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
      if (ppid === pid) out.push(Number(entry))
    } catch {
      // the process ended while we looked: not a child any more
    }
  }
  return out
}

/** A running throwaway cluster. */
export interface Cluster {
  /** `postgres://keel@127.0.0.1:<port>/postgres` (trust authentication, loopback only). */
  readonly url: string
  readonly port: number
  /** Stops the server (fast shutdown: open connections are terminated). */
  stop(): Promise<void>
  /** Starts it again on the same port and data. */
  start(): Promise<void>
  /** Freezes the postmaster and every backend with SIGSTOP: connections stay open, nothing answers. */
  freeze(): void
  /** Resumes what `freeze` stopped. */
  thaw(): void
  /** Thaws, stops and removes the cluster (idempotent). */
  destroy(): Promise<void>
}

/** Creates and starts a cluster. Throws with the server log's tail when it cannot. */
export async function startCluster(): Promise<Cluster> {
  const found = findBin()
  if ('missing' in found) throw new Error(`cannot start a throwaway PostgreSQL: ${found.missing}`)
  const { bin } = found
  const user = await serverUser()
  const dir = mkdtempSync(join(tmpdir(), 'keel-pgtmp-'))
  const data = join(dir, 'data')
  const log = join(dir, 'server.log')
  if (user) await chown(dir, user.uid, user.gid)
  const as = (cmd: string, args: string[]) =>
    user ? run('runuser', ['-u', 'postgres', '--', join(bin, cmd), ...args]) : run(join(bin, cmd), args)
  const watchdog = spawnWatchdog(dir, data, bin, user !== undefined)
  let port = 0
  let frozen: number[] = []
  const postmaster = (): number | undefined => {
    try {
      return Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0])
    } catch {
      return undefined
    }
  }
  const start = async () => {
    await as('pg_ctl', [
      '-D',
      data,
      '-l',
      log,
      '-w',
      '-t',
      '60',
      '-o',
      `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=40`,
      'start',
    ])
  }
  const logTail = () => {
    try {
      return readFileSync(log, 'utf8').split('\n').slice(-15).join('\n')
    } catch {
      return '(no server log)'
    }
  }
  try {
    await as('initdb', [
      '-D',
      data,
      '-U',
      'keel',
      '-A',
      'trust',
      '--no-sync',
      '--no-instructions',
      '-E',
      'UTF8',
      '--locale=C',
    ])
    for (let attempt = 1; ; attempt++) {
      port = await freePort()
      try {
        await start()
        break
      } catch (error) {
        // another process took the port between the probe and the start: try another one
        if (attempt >= 5) throw new Error(`pg_ctl start failed: ${String(error)}\n${logTail()}`)
      }
    }
  } catch (error) {
    watchdog.kill('SIGTERM')
    await cleanup(dir, data, bin, user !== undefined)
    throw error
  }
  let destroyed = false
  const cluster: Cluster = {
    url: `postgres://keel@127.0.0.1:${port}/postgres`,
    port,
    stop: async () => {
      cluster.thaw()
      await as('pg_ctl', ['-D', data, '-w', '-t', '60', '-m', 'fast', 'stop'])
    },
    start,
    freeze: () => {
      const pm = postmaster()
      if (pm === undefined) throw new Error('the throwaway cluster is not running')
      // the postmaster first, so it forks nothing new; then every backend it already has
      process.kill(pm, 'SIGSTOP')
      frozen = [pm, ...childrenOf(pm)]
      for (const pid of frozen.slice(1)) process.kill(pid, 'SIGSTOP')
    },
    thaw: () => {
      for (const pid of frozen) {
        try {
          process.kill(pid, 'SIGCONT')
        } catch {
          // it exited meanwhile
        }
      }
      frozen = []
    },
    destroy: async () => {
      if (destroyed) return
      destroyed = true
      cluster.thaw()
      await cleanup(dir, data, bin, user !== undefined)
      watchdog.kill('SIGTERM')
    },
  }
  return cluster
}

/** Stops the server at once (thawing it first) and removes its directory. */
async function cleanup(dir: string, data: string, bin: string, asPostgres: boolean): Promise<void> {
  await run('sh', ['-c', stopScript(dir, data, bin, asPostgres)]).catch(() => undefined)
  rmSync(dir, { recursive: true, force: true })
}

function stopScript(dir: string, data: string, bin: string, asPostgres: boolean): string {
  const ctl = `${asPostgres ? 'runuser -u postgres -- ' : ''}${join(bin, 'pg_ctl')} -D '${data}' -w -t 30 -m immediate stop`
  return [
    `if [ -f '${data}/postmaster.pid' ]; then`,
    `  pm=$(head -n 1 '${data}/postmaster.pid')`,
    `  kill -CONT "$pm" 2>/dev/null; for c in $(ps -o pid= --ppid "$pm" 2>/dev/null); do kill -CONT "$c" 2>/dev/null; done`,
    `  ${ctl} >/dev/null 2>&1 || kill -KILL "$pm" 2>/dev/null`,
    'fi',
    `rm -rf '${dir}'`,
  ].join('\n')
}

/**
 * A detached shell that waits for this process to end, then stops and removes the cluster:
 * the cleanup still happens when the test worker is killed. Ended by `destroy`.
 */
function spawnWatchdog(dir: string, data: string, bin: string, asPostgres: boolean) {
  const script = `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done\n${stopScript(dir, data, bin, asPostgres)}`
  const child = spawn('sh', ['-c', script], { detached: true, stdio: 'ignore' })
  child.unref()
  return child
}
