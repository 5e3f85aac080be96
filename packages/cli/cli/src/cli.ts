// The `keel` command. Ctrl-C aborts a running demo turn; a second one exits.
import { runCli } from './commands.js'

const controller = new AbortController()
process.on('SIGINT', () => {
  if (controller.signal.aborted) process.exit(130)
  controller.abort()
})
let stdoutOpen = true
process.stdout.on('error', () => {
  stdoutOpen = false
})

process.exitCode = await runCli(process.argv.slice(2), {
  env: process.env,
  out: (text) => {
    if (stdoutOpen) process.stdout.write(text)
  },
  err: (text) => process.stderr.write(text),
  color: process.stdout.isTTY === true && !process.env.NO_COLOR,
  signal: controller.signal,
})
