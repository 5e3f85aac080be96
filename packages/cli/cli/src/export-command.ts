import { writeFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import type { CliIo } from './commands.js'
import { sessionToHtml } from './export-html.js'
import { UsageError } from './llm.js'
import { selectStore } from './store.js'

/** `keel sessions export <id> --html [-o file]`: the page on stdout, or in a file. */
export async function exportSession(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parse>
  try {
    parsed = parse(argv)
  } catch (error) {
    throw new UsageError((error as Error).message)
  }
  const { values, positionals } = parsed
  if (positionals.length !== 1 || !values.html) {
    throw new UsageError('usage: keel sessions export <id> --html [-o file] [--store jsonl|postgres]')
  }
  const { store } = selectStore(values.store, io.env)
  try {
    const inspection = await store.inspect(positionals[0]!)
    const html = sessionToHtml(inspection.header, inspection.events)
    if (values.output === undefined) io.out(html)
    else {
      await writeFile(values.output, html, 'utf8')
      io.err(`keel: wrote ${values.output}\n`)
    }
    return 0
  } finally {
    await store.close()
  }
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    options: { html: { type: 'boolean' }, output: { type: 'string', short: 'o' }, store: { type: 'string' } },
    allowPositionals: true,
    strict: true,
  })
}
