import { afterEach, describe, expect, it } from 'vitest'
import { CACHE_BLOCK_TOKENS, type ScriptedServer, startScriptedServer } from '../src/index.js'

const servers: ScriptedServer[] = []
async function start(options: Parameters<typeof startScriptedServer>[0] = {}): Promise<ScriptedServer> {
  const server = await startScriptedServer(options)
  servers.push(server)
  return server
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()))
})

const tools = [{ type: 'function', function: { name: 'read_file', description: 'Reads.', parameters: {} } }]
const long = (seed: string) => `${seed} `.repeat(600)

async function usageOf(
  server: ScriptedServer,
  body: Record<string, unknown>,
): Promise<{ prompt_tokens: number; prompt_cache_hit_tokens: number; prompt_cache_miss_tokens: number }> {
  const response = await fetch(`${server.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', stream: false, ...body }),
  })
  expect(response.status).toBe(200)
  return ((await response.json()) as { usage: never }).usage
}

describe('prompt cache', () => {
  it('reports the leading 64-token blocks an earlier request sent as cache hits', async () => {
    const server = await start({ promptCache: true, handler: () => ({ text: 'ok' }) })
    const first = [
      { role: 'system', content: long('system') },
      { role: 'user', content: long('task') },
    ]
    const cold = await usageOf(server, { messages: first, tools })
    expect(cold.prompt_cache_hit_tokens).toBe(0)
    // the tool schemas count as prompt
    expect(cold.prompt_tokens).toBe(Math.ceil((JSON.stringify(tools) + JSON.stringify(first)).length / 4))

    // the same prefix plus one more message: every whole block of the first request hits
    const next = [...first, { role: 'user', content: 'and then?' }]
    const warm = await usageOf(server, { messages: next, tools })
    const sharedChars = (JSON.stringify(tools) + JSON.stringify(first)).length - 1 // up to the closing `]`
    const blocks = Math.floor(sharedChars / (CACHE_BLOCK_TOKENS * 4))
    expect(warm.prompt_cache_hit_tokens).toBe(blocks * CACHE_BLOCK_TOKENS)
    expect(warm.prompt_cache_miss_tokens).toBe(warm.prompt_tokens - warm.prompt_cache_hit_tokens)

    // other tools: the prefix differs from the first character of the prompt
    const noTools = await usageOf(server, { messages: next })
    expect(noTools.prompt_cache_hit_tokens).toBe(0)
    // another model never shares a cache
    const otherModel = await usageOf(server, { model: 'other', messages: next, tools })
    expect(otherModel.prompt_cache_hit_tokens).toBe(0)
  })

  it('keeps a step that scripts its own cache hits as scripted', async () => {
    const server = await start({
      promptCache: true,
      script: [
        { text: 'a' },
        { text: 'b', usage: { promptTokens: 900, completionTokens: 3, cacheHitTokens: 17 } },
      ],
    })
    const messages = [{ role: 'user', content: long('x') }]
    await usageOf(server, { messages })
    const scripted = await usageOf(server, { messages })
    expect(scripted).toMatchObject({ prompt_tokens: 900, prompt_cache_hit_tokens: 17 })
  })
})

describe('context window', () => {
  it('answers a request longer than the window (prompt plus max_tokens) with the 400 DeepSeek sends', async () => {
    const server = await start({ contextWindow: 1_000, handler: () => ({ text: 'ok' }) })
    const fits = await fetch(`${server.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'm',
        messages: [{ role: 'user', content: 'x'.repeat(2_000) }],
        max_tokens: 100,
      }),
    })
    expect(fits.status).toBe(200)
    const over = await fetch(`${server.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'm',
        messages: [{ role: 'user', content: 'x'.repeat(2_000) }],
        max_tokens: 600,
      }),
    })
    expect(over.status).toBe(400)
    const message = ((await over.json()) as { error: { message: string } }).error.message
    expect(message).toMatch(/maximum context length is 1000 tokens/)
    expect(message).toMatch(/600 in the completion/)
    expect(server.lastRequest?.outcome).toBe('http-error')
    expect(server.problems).toEqual([])
  })
})
