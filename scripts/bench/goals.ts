// The goals a benchmark states, printed together at its end as met or MISSED (never hidden).

/** One goal: a measured value against its limit (a ratio unless `unit` says otherwise). */
export interface Goal {
  readonly name: string
  readonly value: number
  readonly limit: number
  readonly unit?: 's'
}

/** Prints the goals of this run, each with its value, its limit and whether it was met. */
export function printGoals(goals: readonly Goal[]): void {
  if (goals.length === 0) return
  console.log('\ngoals (this run):')
  const width = Math.max(...goals.map((g) => g.name.length))
  for (const g of goals) {
    const show = (v: number) => (g.unit === 's' ? `${v.toFixed(3)} s` : `${v.toFixed(2)}x`)
    const verdict = g.value <= g.limit ? 'met' : 'MISSED'
    console.log(
      `  ${g.name.padEnd(width)}  ${show(g.value).padStart(9)}  (goal <= ${show(g.limit)})  ${verdict}`,
    )
  }
}
