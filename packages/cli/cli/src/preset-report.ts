import {
  type BrokenPresetFile,
  brokenError,
  formatPresetProblem,
  loadPresetReport,
  type PresetReport,
} from '@keel/presets'
import type { CliIo } from './io.js'
import { pluginSearch } from './plugin-search.js'

/**
 * The presets of `$KEEL_HOME` and the project, with every broken file named on stderr (each
 * problem on its own line); a broken file disables only its own preset — unless it is the one
 * asked for. The report's catalog holds the plugin packages the presets name (imported).
 */
export async function loadReportedPresets(
  home: string,
  cwd: string,
  io: CliIo,
  wanted: string | undefined,
): Promise<PresetReport> {
  const report = await loadPresetReport(pluginSearch(home, cwd))
  reportBroken(report.broken, io)
  const asked = wanted === undefined ? undefined : report.broken.find((b) => b.id === wanted)
  if (asked) throw brokenError([asked])
  return report
}

/** Names each broken preset file and its problems on stderr. */
export function reportBroken(broken: readonly BrokenPresetFile[], io: Pick<CliIo, 'err'>): void {
  for (const file of broken) {
    for (const problem of file.problems) io.err(`keel: ${formatPresetProblem(file.file, problem)}\n`)
    io.err(
      `keel: ${file.file} is disabled${file.id ? ` (preset ${file.id})` : ''}; the other presets are fine\n`,
    )
  }
}
