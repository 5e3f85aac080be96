/** Why this run must take the sources (a plugin package may be loaded), or undefined. */
export declare function pluginPackagesReason(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): string | undefined
