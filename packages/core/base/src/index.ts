export type { Brand } from './brand.js'
export { canonicalJson } from './canonical.js'
export { isKeelError, KeelError } from './errors.js'
export {
  assertPlainJson,
  deepFreezeJson,
  type JsonObject,
  type JsonValue,
  MAX_JSON_DEPTH,
  NonJsonValueError,
  toFrozenJson,
} from './json.js'
