// A long, compacted JSONL session written straight to disk, for the resume and replay
// benchmarks: realistic turns (a user message, three steps, two read_file calls per tool
// step with ~1 KB outputs) and, every `compactEvery` turns, a compaction that replaces all
// but the opening system message and the most recent `keep` surface nodes with a summary
// (as @keel/compaction does), so the surface stays bounded while the log grows. The first
// `open` of it validates every line (the file has no integrity records yet) and its `close`
// writes the records and a checkpoint at the last turn.
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs'
import { join } from 'node:path'
import { SESSION_FORMAT_VERSION } from '@keel/session'
import { filler, stream } from './session-ops.js'

export interface BigSessionShape {
  /** Events in the log (rounded up to a whole turn). */
  readonly events: number
  /** Turns between compactions. */
  readonly compactEvery: number
  /** Surface nodes a compaction keeps (besides the system message and the summary). */
  readonly keep: number
}

/** Writes the session file; returns its path and event count. */
export function writeBigSession(
  home: string,
  id: string,
  shape: BigSessionShape,
): { file: string; events: number } {
  const dir = join(home, 'sessions', id)
  mkdirSync(dir, { recursive: true })
  const file = join(dir, 'session.jsonl')
  const fd = openSync(file, 'w')
  const header = { version: SESSION_FORMAT_VERSION, id, createdAt: 1_700_000_000_000 }
  writeSync(
    fd,
    `${JSON.stringify({ format: 'keel-session', formatVersion: SESSION_FORMAT_VERSION, header })}\n`,
  )
  let seq = 0
  let chunk = ''
  const surface: number[] = []
  const emit = (type: string, data: unknown, extra: Record<string, unknown> = {}) => {
    chunk += `${JSON.stringify({ type, seq, time: 1_700_000_000_000 + seq, data, ...extra })}\n`
    if (chunk.length > 1 << 22) {
      writeSync(fd, chunk)
      chunk = ''
    }
    return seq++
  }
  const text = (t: string) => [{ type: 'text', text: t }]
  surface.push(
    emit('system/message', { message: { role: 'system', content: text('You are a careful agent.') } }),
  )
  for (let turn = 1; seq < shape.events; turn++) {
    emit('turn/start', { turn })
    surface.push(emit('user/message', { message: { role: 'user', content: text(filler(160, turn)) } }))
    for (let step = 1; step <= 3; step++) {
      emit('step/start', { turn, step })
      const ids = step < 3 ? [0, 1].map((i) => `call_${turn}_${step}_${i}`) : []
      const calls = ids.map((id) => ({
        type: 'tool-call',
        id,
        name: 'read_file',
        arguments: `{"path":"src/f${turn % 400}.ts"}`,
      }))
      const message = { role: 'assistant', content: [...text(filler(200, step)), ...calls] }
      surface.push(emit('assistant/message', { turn, step, message, stream }))
      for (const c of calls)
        emit('tool/call', { turn, step, callId: c.id, name: c.name, arguments: c.arguments })
      for (const c of calls) {
        const result = {
          role: 'tool',
          toolCallId: c.id,
          toolName: 'read_file',
          content: text(filler(1000, turn)),
        }
        surface.push(emit('tool/result', { turn, step, message: result }))
      }
      emit('step/end', { turn, step })
    }
    emit('turn/end', { turn, reason: 'completed' })
    if (turn % shape.compactEvery === 0 && surface.length > shape.keep + 2) {
      const shadowed = surface.slice(1, surface.length - shape.keep)
      const summary = {
        role: 'user',
        content: text(`Summary of the work up to turn ${turn}. ${filler(2000, turn)}`),
      }
      const replace = { op: 'replace', startSeq: shadowed[0], endSeq: shadowed[shadowed.length - 1] }
      const at = emit(
        'user/message',
        { message: summary, source: 'compaction' },
        { surfaceOp: replace, sourceEventSeqs: shadowed },
      )
      surface.splice(1, shadowed.length, at)
    }
  }
  writeSync(fd, chunk)
  closeSync(fd)
  return { file, events: seq }
}
