// The `keel` command.
import { runAsProcess } from './entry.js'

await runAsProcess(process.argv.slice(2))
