import { runStoreConformance } from '@keel/store-testkit'
import { jsonlFixture } from './helpers.js'

runStoreConformance('jsonl', jsonlFixture)
