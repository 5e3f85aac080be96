/**
 * Loads the interactive UI. Ink renders only a final frame, never the live one, when it
 * believes it runs in CI — judged once, from `CI` / `CONTINUOUS_INTEGRATION`, when it is
 * first imported. Interactive `keel` runs only on a real terminal, where a person needs the
 * live frame whatever those variables say (a dev container or a CI debug shell often sets
 * `CI`), so Ink is imported with them hidden, and they are restored at once: tools, hooks
 * and everything else keep seeing the environment as it is.
 */
export async function loadInteractiveUi(): Promise<typeof import('./run.js')> {
  const names = ['CI', 'CONTINUOUS_INTEGRATION'] as const
  const saved = names.map((name) => [name, process.env[name]] as const)
  for (const name of names) delete process.env[name]
  try {
    return await import('./run.js')
  } finally {
    for (const [name, value] of saved) if (value !== undefined) process.env[name] = value
  }
}
