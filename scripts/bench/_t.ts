import { readFileSync } from 'node:fs'
import { deepFreezeJson } from '@keel/base'

const cpu = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
const t = readFileSync('/tmp/rb/1m/sessions/big/session.checkpoint', 'latin1')
const body = t.slice(t.indexOf('\n') + 1)
function freezeFresh(value: unknown, levels: number): boolean {
  if (levels === 0) return false
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i]
      if (item !== null && typeof item === 'object' && !freezeFresh(item, levels - 1)) return false
    }
  } else {
    for (const key in value as object) {
      const item = (value as Record<string, unknown>)[key]
      if (item !== null && typeof item === 'object' && !freezeFresh(item, levels - 1)) return false
    }
  }
  Object.freeze(value)
  return true
}
const mode = process.argv[2]
const d = JSON.parse(body)
const c2 = cpu()
if (mode === 'a') for (const e of d.state.events) deepFreezeJson(e)
else for (const e of d.state.events) freezeFresh(e, 64)
const c3 = cpu()
const d2 = JSON.parse(body)
const c4 = cpu()
if (mode === 'a') for (const e of d2.state.events) deepFreezeJson(e)
else for (const e of d2.state.events) freezeFresh(e, 64)
const c5 = cpu()
console.log(mode, 'freeze cold', (c3 - c2).toFixed(2), 'second', (c5 - c4).toFixed(2))
