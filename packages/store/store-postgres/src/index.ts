export { MIGRATIONS, migrate } from './migrations.js'
export { PostgresStore, type PostgresStoreOptions, PostgresUrlMissing } from './store.js'
