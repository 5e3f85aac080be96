export type { Brand } from './brand.js'
export { canonicalDigest, canonicalJson } from './canonical.js'
export { errorMessage, errorRecordOf, isKeelError, KeelError } from './errors.js'
export {
  deepFreezeJson,
  type JsonObject,
  type JsonValue,
  MAX_JSON_DEPTH,
  NonJsonValueError,
  toFrozenJson,
} from './json.js'
