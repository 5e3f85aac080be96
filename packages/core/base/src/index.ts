export {
  type BoundedIssue,
  boundIssues,
  boundText,
  elide,
  formatJsonPath,
  type IssueLike,
  MAX_ERROR_ISSUES,
  MAX_ERROR_KEY_CHARS,
  MAX_ERROR_TEXT_CHARS,
  MAX_ERROR_VALUE_CHARS,
  previewJson,
} from './bounded.js'
export type { Brand } from './brand.js'
export { canonicalDigest, canonicalJson } from './canonical.js'
export { errorMessage, errorRecordOf, isKeelError, KeelError } from './errors.js'
export {
  assertPlainJson,
  deepFreezeJson,
  freezeParsedJson,
  type JsonObject,
  type JsonValue,
  MAX_JSON_DEPTH,
  NonJsonValueError,
  toFrozenJson,
} from './json.js'
export { type BoundedRead, fileKind, NotRegularFile, openRegularFile, readBoundedText } from './read-file.js'
