import { describe, expect, it } from 'vitest'
import { type DeliveryFacts, deliveryDecision, type InstructionsState } from '../src/index.js'

const file = {
  path: 'AGENTS.md',
  scope: 'project' as const,
  sha256: 'a'.repeat(64),
  bytes: 1,
  deliveredBytes: 1,
}
const delivered = (over: Partial<NonNullable<InstructionsState['last']>> = {}): InstructionsState => ({
  approved: [],
  last: { seq: 10, loaded: { reason: 'start', files: [file], digest: 'd1' }, messageSeq: 11, ...over },
})
const facts = (over: Partial<DeliveryFacts> = {}): DeliveryFacts => ({
  digest: 'd1',
  hasContent: true,
  isOnSurface: () => true,
  processStartSeq: 0,
  afterCompaction: false,
  ...over,
})

describe('deliveryDecision', () => {
  const cases: Array<[string, InstructionsState, DeliveryFacts, ReturnType<typeof deliveryDecision>]> = [
    ['nothing delivered, files now', { approved: [] }, facts(), 'start'],
    ['nothing delivered, nothing now', { approved: [] }, facts({ hasContent: false }), null],
    ['same text, still in the history', delivered(), facts(), null],
    ['the text changed', delivered(), facts({ digest: 'd2' }), 'changed'],
    ['every file removed', delivered(), facts({ digest: 'none', hasContent: false }), 'changed'],
    [
      '"none" was said and nothing is there now',
      {
        approved: [],
        last: { seq: 3, loaded: { reason: 'changed', files: [], digest: 'none' }, messageSeq: 4 },
      },
      facts({ digest: 'other', hasContent: false }),
      null,
    ],
    [
      'same text, replaced by a compaction',
      delivered(),
      facts({ isOnSurface: () => false, afterCompaction: true }),
      'compact',
    ],
    ['same text, gone without a compaction', delivered(), facts({ isOnSurface: () => false }), 'missing'],
    [
      'queued in this process, not sent yet',
      delivered({ messageSeq: undefined }),
      facts({ processStartSeq: 5 }),
      null,
    ],
    [
      'logged by an earlier process that never sent it',
      delivered({ messageSeq: undefined }),
      facts({ processStartSeq: 20 }),
      'missing',
    ],
  ]
  it.each(cases)('%s', (_name, state, given, expected) => {
    expect(deliveryDecision(state, given)).toBe(expected)
  })
})
