// After a compaction the model no longer sees what it read: edits on such a file are
// refused until it reads the file again (the real fs tools, in the real agent).
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { editFileTool, readFileTool } from '@keel/fs'
import type { RecordedRequest, ScriptedResponse } from '@keel/scripted-server'
import { describe, expect, it } from 'vitest'
import { filler } from './helpers.js'
import { isSummary, realAgent } from './real-agent.js'

describe('files read before a compaction', () => {
  it('an edit of a file whose read was summarized is FILE_NOT_READ until the file is read again', async () => {
    const script: ScriptedResponse[] = [
      { toolCalls: [{ name: 'read_file', arguments: { path: 'a.ts' } }] },
      { text: filler(4_000, 'about a.ts') },
      { text: filler(4_000, 'second answer') },
      { text: filler(4_000, 'third answer') },
      // after the compaction: an edit straight away, then a read, then the edit again
      { toolCalls: [{ name: 'edit_file', arguments: { path: 'a.ts', oldString: 'one', newString: 'ONE' } }] },
      { toolCalls: [{ name: 'read_file', arguments: { path: 'a.ts' } }] },
      { toolCalls: [{ name: 'edit_file', arguments: { path: 'a.ts', oldString: 'one', newString: 'ONE' } }] },
      { text: 'Edited.' },
    ]
    let next = 0
    const { agent, session, root } = await realAgent({
      id: 'files-after-compaction',
      server: {
        handler: (request: RecordedRequest) =>
          isSummary(request) ? { text: '## Goal\nEdit a.ts.' } : script[next++]!,
      },
      tools: [readFileTool() as never, editFileTool() as never],
    })
    writeFileSync(join(root, 'a.ts'), 'const one = 1\n')
    await agent.send('Read a.ts.')
    await agent.send('Go on.')
    await agent.send('Go on.')
    expect(await agent.runCommand('compact')).toMatch(/older history summarized/)
    const readResult = session.events.find(
      (e) => e.type === 'tool/result' && e.data.message.toolName === 'read_file',
    )!
    expect(session.isOnSurface(readResult.seq)).toBe(false)

    expect(await agent.send('Rename one to ONE in a.ts.')).toMatchObject({
      reason: 'completed',
      text: 'Edited.',
    })
    const edits = session.events
      .filter((e) => e.type === 'tool/result' && e.data.message.toolName === 'edit_file')
      .map((e) => (e.type === 'tool/result' ? e.data : (null as never)))
    expect(edits.map((e) => e.errorCode)).toEqual(['FILE_NOT_READ', undefined])
    expect(JSON.stringify(edits[0]!.message.content)).toContain(
      'no longer in your context (a compaction replaced it',
    )
    expect(readFileSync(join(root, 'a.ts'), 'utf8')).toBe('const ONE = 1\n')
  })
})
