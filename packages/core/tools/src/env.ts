/**
 * Which variables of the agent's environment a tool's child process inherits. Patterns are
 * whole variable names, case-insensitive, where `*` matches any run of characters
 * (`*TOKEN*`, `AWS_*`, `HOME`).
 */
export interface EnvironmentPolicy {
  /** Inherited even when a deny rule or the credential check would drop them. */
  allow?: readonly string[]
  /** Dropped in addition to the default credential patterns. */
  deny?: readonly string[]
  /** Apply {@link DEFAULT_SECRET_NAME_PATTERNS} and the value checks. Default true. */
  dropCredentials?: boolean
  /**
   * Secret values (for example the model adapter's API key): a variable holding one of them
   * is dropped whatever its name.
   */
  secretValues?: readonly string[]
}

/**
 * Variable names that look like credentials and are dropped by default: anything naming a
 * key, token, secret, password, passphrase, credential, cookie, private key or a personal
 * access token.
 */
export const DEFAULT_SECRET_NAME_PATTERNS: readonly string[] = [
  '*KEY*',
  '*TOKEN*',
  '*SECRET*',
  '*PASSWORD*',
  '*PASSWD*',
  '*PASSPHRASE*',
  '*CREDENTIAL*',
  '*COOKIE*',
  '*_PAT',
  '*_AUTH',
]

const cache = new Map<string, RegExp>()

function toRegExp(pattern: string): RegExp {
  let re = cache.get(pattern)
  if (!re) {
    const body = pattern
      .split('*')
      .map((part) => part.replace(/[\\^$.|?+()[\]{}]/g, '\\$&'))
      .join('.*')
    re = new RegExp(`^${body}$`, 'i')
    cache.set(pattern, re)
  }
  return re
}

/** Whether `name` matches one of the patterns (see {@link EnvironmentPolicy}). */
export function matchesEnvPattern(name: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => toRegExp(p).test(name))
}

/** A URL carrying a password in its user-info part (`postgres://user:pass@host/db`). */
const URL_WITH_PASSWORD = /^[a-z][a-z0-9+.-]*:\/\/[^/@:\s]*:[^/@\s]+@/i

/** Why a variable is dropped, or undefined when it is inherited. */
export function dropReason(name: string, value: string, policy: EnvironmentPolicy = {}): string | undefined {
  if (policy.allow && matchesEnvPattern(name, policy.allow)) return undefined
  if (policy.deny && matchesEnvPattern(name, policy.deny)) return 'denied by the policy'
  if (policy.dropCredentials === false) return undefined
  if (matchesEnvPattern(name, DEFAULT_SECRET_NAME_PATTERNS)) return 'its name looks like a credential'
  if (URL_WITH_PASSWORD.test(value)) return 'its value is a URL with a password'
  if (policy.secretValues?.some((s) => s !== '' && value.includes(s))) return 'its value holds a secret'
  return undefined
}

/**
 * The environment a tool's child process gets: `source` (default `process.env`) minus the
 * variables {@link dropReason} drops, plus `extra` (set explicitly by the operator, so never
 * filtered). Returns the environment and the names dropped (never their values).
 */
export function toolEnvironment(
  policy: EnvironmentPolicy = {},
  extra: Readonly<Record<string, string>> = {},
  source: NodeJS.ProcessEnv = process.env,
): { env: Record<string, string>; dropped: string[] } {
  const env: Record<string, string> = {}
  const dropped: string[] = []
  for (const [name, value] of Object.entries(source)) {
    if (value === undefined) continue
    if (dropReason(name, value, policy) === undefined) env[name] = value
    else dropped.push(name)
  }
  return { env: { ...env, ...extra }, dropped: dropped.sort() }
}
