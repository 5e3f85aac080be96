/**
 * Loads the interactive UI. Ink renders only a final frame, never the live one, when it
 * believes it runs in CI — judged once, from `CI` / `CONTINUOUS_INTEGRATION`, when it is
 * first imported. Interactive `keel` runs only on a real terminal, where a person needs the
 * live frame whatever those variables say (a dev container or a CI debug shell often sets
 * `CI`), so Ink is imported with them hidden, and they are restored at once: tools, hooks
 * and everything else keep seeing the environment as it is.
 *
 * Without `color` (NO_COLOR, FORCE_COLOR=0) the colour libraries (chalk, in Ink and the
 * markdown renderer) are imported with `FORCE_COLOR=1`, since they also judge at import and
 * know only all styles or none: none would hide the input line's cursor (an inverse cell).
 * The UI then strips only the colours from what it writes (`no-color.ts`). `NO_COLOR` is hidden
 * with them: Node warns on stderr, over the screen, when it finds both set.
 */
export async function loadInteractiveUi(options: { color: boolean }): Promise<typeof import('./run.js')> {
  const names = ['CI', 'CONTINUOUS_INTEGRATION', 'FORCE_COLOR', 'NO_COLOR'] as const
  const saved = names.map((name) => [name, process.env[name]] as const)
  delete process.env.CI
  delete process.env.CONTINUOUS_INTEGRATION
  if (!options.color) {
    process.env.FORCE_COLOR = '1'
    delete process.env.NO_COLOR
  }
  try {
    return await import('./run.js')
  } finally {
    for (const [name, value] of saved) {
      if (value !== undefined) process.env[name] = value
      else delete process.env[name]
    }
  }
}
