// One pasted message larger than the window must not make the session unusable.
import { describe, expect, it } from 'vitest'
import { filler } from './helpers.js'
import { agentRequests, isSummary, realAgent } from './real-agent.js'

const WINDOW = 16_000

describe('an oversized message', () => {
  it('a ~20k-token paste in a 16k window is cut (full text kept in the log) and the session goes on', async () => {
    const { server, agent, session } = await realAgent({
      id: 'oversized-paste',
      server: {
        contextWindow: WINDOW,
        handler: (request) =>
          isSummary(request) ? { text: '## Goal\nRead the log.' } : { text: `Answer ${request.index}.` },
      },
      agent: { contextWindows: { 'scripted-model': WINDOW }, maxTokens: 1_000 },
    })
    const paste = `BEGIN OF THE LOG\n${filler(80_000, 'log line')}\nEND OF THE LOG`
    const first = await agent.send(`Here is the build log:\n${paste}`)
    expect(first).toMatchObject({ reason: 'completed' })
    const second = await agent.send('What failed?')
    expect(second).toMatchObject({ reason: 'completed' })
    const third = await agent.send('And why?')
    expect(third).toMatchObject({ reason: 'completed' })

    // no request was refused, and the model saw the beginning and the end of the paste
    expect(server.requests.filter((r) => r.outcome === 'http-error')).toEqual([])
    const sent = JSON.stringify(agentRequests(server)[0]!.body!.messages)
    expect(sent).toContain('BEGIN OF THE LOG')
    expect(sent).toContain('END OF THE LOG')
    expect(sent).toMatch(/characters cut by compaction: this message was about [\d,]+ tokens/)
    // the log keeps every character the user pasted
    const original = session.events.find((e) => e.type === 'user/message' && e.surfaceOp === undefined)!
    expect(original.type === 'user/message' && JSON.stringify(original.data.message)).toContain(
      filler(80_000, 'log line'),
    )
    const cut = session.events.find((e) => e.type === 'compaction/prune' && e.data.keptTokens !== undefined)!
    expect(cut.data).toMatchObject({ shadowedSeqs: [original.seq] })

    // nothing left to do: /compact says so instead of "Compacted: N → N tokens"
    const reply = await agent.runCommand('compact')
    expect(reply).toMatch(
      /^Nothing was compacted \(about [\d,]+ tokens\): no old tool output to prune, no oversized message/,
    )
  })
})
