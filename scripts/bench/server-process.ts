// A scripted server in a process of its own (so its event loop does not share time with the
// client being measured), driven by messages: the first reply carries its base URL.
import { fork } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

/** What the server process answers: its base URL first, then the request bodies asked for. */
export type ServerReply = { baseURL?: string; bodies?: unknown[] }

/** Starts `script` (a file beside this one) with `args`; `ask` sends a message (or none) and awaits the next reply. */
export async function startServerProcess(script: string, args: readonly string[] = []) {
  const child = fork(join(dirname(fileURLToPath(import.meta.url)), script), [...args], {
    execArgv: ['--import', 'tsx'],
  })
  const replies: Array<(reply: ServerReply) => void> = []
  child.on('message', (reply: ServerReply) => replies.shift()?.(reply))
  const ask = (message?: object): Promise<ServerReply> =>
    new Promise((resolve) => {
      replies.push(resolve)
      if (message) child.send(message)
    })
  const { baseURL } = (await ask()) as { baseURL: string }
  return { baseURL, ask, close: () => child.send({ close: true }) }
}
