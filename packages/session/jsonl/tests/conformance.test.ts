import { runStoreConformance } from '@keel/persistence/conformance'
import { jsonlFixture } from './helpers.js'

runStoreConformance('jsonl', jsonlFixture)
