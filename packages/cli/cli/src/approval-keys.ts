import { type ApprovalAnswer, describeRule, type SessionRule } from '@keel/agent'

/**
 * The one key scheme of approval questions, in the interactive UI and in one-shot mode:
 * `y` allows once, `a` allows what the question's rule covers for the rest of the session,
 * `n` rejects with a reason (the reason goes to the model). The interactive UI takes single
 * keys (`n` then asks for the reason; Esc rejects); one-shot mode reads a line (`n <reason>`).
 */
export function approvalLegend(rule: SessionRule, mode: 'keys' | 'line'): string {
  return approvalKeys(rule, mode).join(LEGEND_GAP)
}

/** What separates the keys of a legend. */
export const LEGEND_GAP = '   '

/** The keys of {@link approvalLegend}, one entry each (a narrow terminal wraps between them). */
export function approvalKeys(rule: SessionRule, mode: 'keys' | 'line'): string[] {
  const scope = `[a] allow ${describeRule(rule)} for this session`
  return mode === 'keys'
    ? ['[y] allow once', scope, '[n] reject with a reason', '(Esc rejects)']
    : ['[y] allow once', scope, '[n <reason>] reject']
}

/** Reads one typed answer: `y`/`yes`, `a`/`always`, `n`/`no` followed by an optional reason. */
export function parseAnswer(line: string): ApprovalAnswer | undefined {
  const match = /^\s*(y|yes|a|always|n|no)\b[\s:,-]*(.*)$/iu.exec(line)
  if (!match) return undefined
  const word = match[1]!.toLowerCase()
  const reason = match[2]!.trim()
  if (word === 'y' || word === 'yes') return { outcome: 'allow-once' }
  if (word === 'a' || word === 'always') return { outcome: 'allow-session' }
  return { outcome: 'reject', reason: reason === '' ? 'rejected by the user' : reason }
}

/** Removes control characters (escape sequences a model could plant in a command) before printing. */
export function printable(text: string): string {
  let out = ''
  for (const char of text) {
    const code = char.codePointAt(0)!
    out += code < 0x20 || (code >= 0x7f && code <= 0x9f) ? '?' : char
  }
  return out
}
