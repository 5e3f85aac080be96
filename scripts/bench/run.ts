// `pnpm bench [names…] [--quick]`: runs every `scripts/bench/*.bench.ts` (or the ones named)
// in its own process, one after another, so one benchmark's heap does not skew the next.
// Each benchmark prints its figures as ratios against a baseline measured in the same run,
// and its goals as met or MISSED. Flags are passed on to every benchmark: `--quick` leaves
// out the slowest cases (the 1M-event resume; see each benchmark's header).
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const args = process.argv.slice(2)
const flags = args.filter((a) => a.startsWith('--'))
const wanted = args.filter((a) => !a.startsWith('--'))
const all = readdirSync(here)
  .filter((f) => f.endsWith('.bench.ts'))
  .sort()
const selected = wanted.length === 0 ? all : all.filter((f) => wanted.some((w) => f.includes(w)))
if (selected.length === 0) {
  console.error(`no benchmark matches ${wanted.join(', ')}; available: ${all.join(', ')}`)
  process.exit(2)
}
let failed = 0
for (const file of selected) {
  console.log(`\n=== ${file} ===`)
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--expose-gc', join(here, file), ...flags], {
    stdio: 'inherit',
  })
  if (result.status !== 0) {
    failed++
    console.error(`${file} exited with ${result.status ?? result.signal}`)
  }
}
process.exit(failed === 0 ? 0 : 1)
