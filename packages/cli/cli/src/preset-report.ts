import {
  type BrokenPresetFile,
  brokenError,
  formatPresetProblem,
  loadPresetReport,
  type PresetSource,
} from '@keel/presets'
import type { CliIo } from './io.js'

/**
 * The presets, with every broken file named on stderr (each problem on its own line); a
 * broken file disables only its own preset — unless it is the one asked for.
 */
export async function loadReportedPresets(
  home: string,
  cwd: string,
  io: CliIo,
  wanted: string | undefined,
): Promise<PresetSource[]> {
  const report = await loadPresetReport({ keelHome: home, projectDir: cwd })
  reportBroken(report.broken, io)
  const asked = wanted === undefined ? undefined : report.broken.find((b) => b.id === wanted)
  if (asked) throw brokenError([asked])
  return report.presets
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
