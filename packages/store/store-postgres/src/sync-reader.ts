import { createRequire } from 'node:module'
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads'
import { KeelError } from '@keel/base'

/** How long a synchronous read waits for the server before it fails. */
const TIMEOUT_MS = 60_000

// The worker: one connection of its own, one query at a time, each answer posted on the
// reply port and signalled through the shared flag. Plain CommonJS, so it runs the same
// from sources and from a build.
const WORKER = `
const { workerData } = require('node:worker_threads')
const pg = require(workerData.pg)
const flag = new Int32Array(workerData.flag)
const port = workerData.port
const client = new pg.Client({ connectionString: workerData.url, application_name: 'keel:prefix' })
const ready = client.connect()
client.on('error', () => {})
port.on('message', async ({ text, values }) => {
  let reply
  try {
    await ready
    reply = { rows: (await client.query(text, values)).rows }
  } catch (error) {
    reply = { error: String(error && error.message), code: error && error.code }
  }
  port.postMessage(reply)
  Atomics.store(flag, 0, 1)
  Atomics.notify(flag, 0)
})
`

/** A query of the synchronous reader failed (the server, the connection, a timeout). */
export class SyncQueryFailed extends KeelError<'STORE_IO_FAILED'> {}

/**
 * Synchronous queries, for the events of a resumed session read on demand
 * (`session.events[seq]` is synchronous): a worker thread holds its own connection, and
 * the caller blocks on a shared flag until the answer is posted. Started on first use,
 * never keeps the process alive.
 */
export class SyncQueries {
  readonly #url: string
  #worker: { worker: Worker; port: MessagePort; flag: Int32Array } | undefined

  constructor(url: string) {
    this.#url = url
  }

  /** Runs one query and returns its rows, blocking this thread until they arrive. */
  query<R>(text: string, values: readonly unknown[]): R[] {
    const { port, flag } = this.#start()
    Atomics.store(flag, 0, 0)
    port.postMessage({ text, values })
    if (Atomics.wait(flag, 0, 0, TIMEOUT_MS) === 'timed-out') {
      this.close()
      throw new SyncQueryFailed('STORE_IO_FAILED', `PostgreSQL did not answer within ${TIMEOUT_MS / 1000} s`)
    }
    const reply = receiveMessageOnPort(port)?.message as { rows?: R[]; error?: string; code?: string }
    if (!reply?.rows) {
      throw new SyncQueryFailed('STORE_IO_FAILED', `reading events from PostgreSQL failed: ${reply?.error}`, {
        errno: reply?.code,
      })
    }
    return reply.rows
  }

  #start() {
    if (this.#worker) return this.#worker
    const { port1, port2 } = new MessageChannel()
    const shared = new SharedArrayBuffer(4)
    const worker = new Worker(WORKER, {
      eval: true,
      workerData: {
        url: this.#url,
        pg: createRequire(import.meta.url).resolve('pg'),
        flag: shared,
        port: port2,
      },
      transferList: [port2],
    })
    worker.unref()
    port1.unref()
    this.#worker = { worker, port: port1, flag: new Int32Array(shared) }
    return this.#worker
  }

  /** Stops the worker (and its connection). */
  close(): void {
    const started = this.#worker
    this.#worker = undefined
    if (started) {
      started.port.close()
      void started.worker.terminate()
    }
  }
}
