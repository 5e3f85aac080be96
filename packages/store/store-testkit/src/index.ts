export { checkpointCases, EAGER_CHECKPOINTS } from './checkpoints.js'
export { type ConformanceFixture, runStoreConformance } from './conformance.js'
export { appendBigWriteTurn } from './hardening.js'
export { appendEveryCoreEvent, appendSampleTurn, SAMPLE_TURN_EVENTS, sampleStream } from './sample.js'
