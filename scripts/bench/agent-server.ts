// The scripted model server of agent.bench.ts, in its own process so its event loop does not
// share time with the client being measured. Talks to the benchmark over IPC: sends
// `{ baseURL }` when listening, answers `{ last: n }` with the bodies of the last n requests,
// and exits on `close`.
import { type RecordedRequest, type ScriptedResponse, startScriptedServer } from '@keel/scripted-server'

const steps = Number(process.argv[2] ?? 10)
const text = 'The quick brown fox jumps over the lazy dog while the agent loop keeps its log. '.repeat(3)

function respond(request: RecordedRequest): ScriptedResponse {
  const toolResults = (request.body?.messages ?? []).filter((m) => m.role === 'tool').length
  const usage = { promptTokens: 500 + toolResults * 40, completionTokens: 60, cacheHitTokens: 400 }
  if (toolResults >= steps - 1) return { text, usage }
  return {
    reasoning: 'Thinking about the next step briefly.',
    text,
    toolCalls: [{ id: `call_${toolResults}`, name: 'noop', arguments: { n: toolResults } }],
    usage,
  }
}

const server = await startScriptedServer({ handler: respond })
process.on('message', async (message: { last?: number; close?: true }) => {
  if (message.close) {
    await server.close()
    process.exit(0)
  }
  process.send!({ bodies: server.requests.slice(-(message.last ?? 1)).map((r) => r.body) })
})
process.send!({ baseURL: server.baseURL })
