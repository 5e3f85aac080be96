// `pnpm demo`: the README's main job, i.e. `keel demo` with the same arguments.
import { runAsProcess } from './entry.js'

// pnpm passes a leading `--` through when the user writes `pnpm demo -- --live …`.
const argv = process.argv.slice(2).filter((arg, i) => !(i === 0 && arg === '--'))
await runAsProcess(['demo', ...argv])
