import type { LlmChunk, LlmRequest, Message } from '@keel/llm'
import { LlmError, text } from '@keel/llm'
import { type ScriptedServer, type ScriptedServerOptions, startScriptedServer } from '@keel/scripted-server'
import { afterEach } from 'vitest'
import { DeepSeekAdapter, type DeepSeekOptions } from '../src/index.js'

const servers: ScriptedServer[] = []

/** Starts a scripted server closed after the test. */
export async function startServer(options: ScriptedServerOptions = {}): Promise<ScriptedServer> {
  const server = await startScriptedServer(options)
  servers.push(server)
  return server
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

/** An adapter on the scripted server, with no environment. */
export function adapterFor(server: ScriptedServer, options: DeepSeekOptions = {}): DeepSeekAdapter {
  return new DeepSeekAdapter({ baseURL: server.url, env: {}, ...options })
}

export const hello: Message[] = [{ role: 'user', content: [text('hello')] }]

/** Streams a request to the end and returns every chunk. */
export async function collect(
  adapter: DeepSeekAdapter,
  request: Partial<LlmRequest> = {},
): Promise<LlmChunk[]> {
  const chunks: LlmChunk[] = []
  for await (const chunk of adapter.stream({ messages: hello, ...request })) chunks.push(chunk)
  return chunks
}

/** The finish chunk of a stream. */
export function finishOf(chunks: LlmChunk[]): Extract<LlmChunk, { type: 'finish' }> {
  const last = chunks.at(-1)
  if (last?.type !== 'finish')
    throw new Error(`the stream did not end with a finish chunk: ${JSON.stringify(last)}`)
  return last
}

/** Streams a request expected to fail; returns the error and the chunks delivered before it. */
export async function failure(
  adapter: DeepSeekAdapter,
  request: Partial<LlmRequest> = {},
): Promise<{ error: LlmError; chunks: LlmChunk[] }> {
  const chunks: LlmChunk[] = []
  try {
    for await (const chunk of adapter.stream({ messages: hello, ...request })) chunks.push(chunk)
  } catch (error) {
    if (error instanceof LlmError) return { error, chunks }
    throw error
  }
  throw new Error(`expected the stream to fail; it delivered ${JSON.stringify(chunks.at(-1))}`)
}
