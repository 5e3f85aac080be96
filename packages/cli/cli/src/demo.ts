// `pnpm demo`: the README's main job. Runs the demo agent and exits with its code.
// Ctrl-C aborts the running turn (the interrupted prefix is kept in the log); a second one exits.
import { runDemo } from './run-demo.js'

const controller = new AbortController()
process.on('SIGINT', () => {
  if (controller.signal.aborted) process.exit(130)
  controller.abort()
})

// A closed stdout (piped into `head`) must not kill the run: the session log is the record.
let stdoutOpen = true
process.stdout.on('error', () => {
  stdoutOpen = false
})

const argv = process.argv.slice(2).filter((arg, i) => !(i === 0 && arg === '--'))
const outcome = await runDemo({
  argv,
  env: process.env,
  out: {
    write: (text) => {
      if (stdoutOpen) process.stdout.write(text)
    },
    color: process.stdout.isTTY === true && !process.env.NO_COLOR,
  },
  err: (text) => process.stderr.write(text),
  signal: controller.signal,
})
process.exitCode = outcome.exitCode
