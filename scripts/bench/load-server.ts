// The scripted model server of load.bench.ts, in its own process so its event loop does not
// share time with the clients being measured. Every turn is two model calls: the first asks
// for one `noop` tool call, the second (after the tool result) answers with text. Talks to
// the benchmark over IPC: sends `{ baseURL }` when listening, answers `{ last: n }` with the
// bodies of the last n requests, and exits on `close`.
import { type RecordedRequest, type ScriptedResponse, startScriptedServer } from '@keel/scripted-server'

const chunking = { text: 60, reasoning: 60, arguments: 20 }
const text = 'The quick brown fox jumps over the lazy dog while the agent loop keeps its log. '.repeat(3)

function respond(request: RecordedRequest): ScriptedResponse {
  const messages = request.body?.messages ?? []
  const last = messages[messages.length - 1]
  const usage = { promptTokens: 500 + messages.length * 40, completionTokens: 60, cacheHitTokens: 400 }
  // Coarse chunks (a handful per response): the server stays cheap, so what is measured is
  // the clients' work, not the server's event loop.
  if (last?.role === 'tool') return { text, usage, chunking }
  return {
    reasoning: 'Thinking about the next step briefly.',
    text: 'Running the tool.',
    toolCalls: [{ id: `call_${messages.length}`, name: 'noop', arguments: { n: messages.length } }],
    usage,
    chunking,
  }
}

const server = await startScriptedServer({ handler: respond })
process.on('message', async (message: { last?: number; close?: true; forget?: true }) => {
  if (message.close) {
    await server.close()
    process.exit(0)
  }
  if (message.forget) {
    ;(server.requests as RecordedRequest[]).length = 0 // keep the record small between runs
    process.send!({ bodies: [] })
    return
  }
  process.send!({ bodies: server.requests.slice(-(message.last ?? 1)).map((r) => r.body) })
})
process.send!({ baseURL: server.baseURL })
