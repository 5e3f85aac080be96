// `pnpm scripted-server --script file.json` as a real process: it prints its base URL, answers
// from the file (again and again with --repeat), stops on SIGTERM with exit 0, and refuses a
// bad script naming the step before it listens.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'

const CLI = fileURLToPath(new URL('../src/cli.ts', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'keel-scripted-cli-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

interface Running {
  child: ChildProcess
  url: Promise<string>
  stderr(): string
  exit: Promise<number | null>
}

function start(args: string[], env: Record<string, string> = {}): Running {
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args], {
    cwd: fileURLToPath(new URL('..', import.meta.url)), // tsx resolves from here; the script from INIT_CWD or absolute
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let err = ''
  child.stderr!.setEncoding('utf8').on('data', (c: string) => {
    err += c
  })
  const url = new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout!.setEncoding('utf8').on('data', (c: string) => {
      out += c
      if (out.includes('\n')) resolve(out.trim())
    })
    child.on('close', () => reject(new Error(`exited before printing its URL: ${err}`)))
  })
  url.catch(() => undefined) // awaited (or not) by the test
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
  return { child, url, stderr: () => err, exit }
}

async function ask(url: string): Promise<{ status: number; text: string | undefined }> {
  const res = await fetch(`${url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
  })
  const body = (await res.json()) as { choices?: Array<{ message: { content: string | null } }> }
  return { status: res.status, text: body.choices?.[0]?.message.content ?? undefined }
}

describe('pnpm scripted-server', () => {
  it('serves the script from a file (relative to INIT_CWD), once or repeated, and stops on SIGTERM', async () => {
    writeFileSync(join(dir, 'two.json'), JSON.stringify([{ text: 'one' }, { text: 'two' }]))
    const once = start(['--script', 'two.json'], { INIT_CWD: dir })
    const url = await once.url
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/)
    expect((await ask(url)).text).toBe('one')
    expect((await ask(url)).text).toBe('two')
    expect((await ask(url)).status).toBe(500) // used up
    once.child.kill('SIGTERM')
    expect(await once.exit).toBe(0)
    expect(once.stderr()).toContain('2 step(s) from')
    expect(once.stderr()).toContain('request 1: text "one" (completed)')
    expect(once.stderr()).toContain('script exhausted')

    const repeated = start(['--script', join(dir, 'two.json'), '--repeat'])
    const again = await repeated.url
    const texts = []
    for (let i = 0; i < 5; i++) texts.push((await ask(again)).text)
    expect(texts).toEqual(['one', 'two', 'one', 'two', 'one'])
    repeated.child.kill('SIGINT')
    expect(await repeated.exit).toBe(0)
  }, 60_000)

  it('refuses a missing file, bad JSON and a bad step before it listens', async () => {
    writeFileSync(join(dir, 'bad-step.json'), JSON.stringify([{ text: 'ok' }, { txt: 'typo' }]))
    writeFileSync(join(dir, 'not-json.json'), '[{')
    for (const [file, expected] of [
      ['missing.json', 'cannot read the script'],
      ['not-json.json', 'is not JSON'],
      ['bad-step.json', 'step 1 is not a valid scripted response'],
    ] as const) {
      const run = start(['--script', join(dir, file)])
      expect(await run.exit).toBe(1)
      expect(run.stderr()).toContain(expected)
      await expect(run.url).rejects.toThrow()
    }
    const usage = start([])
    expect(await usage.exit).toBe(2)
    expect(usage.stderr()).toContain('--script is required')
  }, 60_000)
})
