// Whether `keel` paints its output, from the environment's conventions: `FORCE_COLOR` (chalk,
// Node) and `NO_COLOR` (https://no-color.org). One rule for one-shot and interactive `keel`.

/** Values of `FORCE_COLOR` that turn colour off (as Node's `tty.getColorDepth` reads them). */
const FORCE_OFF = new Set(['0', 'false'])

/**
 * Colour or not: `FORCE_COLOR` set decides first (`0` / `false` off, any other value on, as in
 * Node, where it takes precedence over `NO_COLOR`); then `NO_COLOR` set and non-empty turns it
 * off; else colour exactly when the output is a terminal.
 */
export function colorWanted(env: Readonly<Record<string, string | undefined>>, isTTY: boolean): boolean {
  const force = env.FORCE_COLOR
  if (force !== undefined) return !FORCE_OFF.has(force.trim().toLowerCase())
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false
  return isTTY
}
