export {
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_QUERY_TIMEOUT_MS,
  DEFAULT_STATEMENT_TIMEOUT_MS,
} from './driver.js'
export { MIGRATIONS, type MigrationClient, migrate } from './migrations.js'
export { PostgresStore, type PostgresStoreOptions, PostgresUrlMissing } from './store.js'
