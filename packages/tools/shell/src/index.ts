import type { Tool } from '@keel/tools'
import { type BashToolOptions, bashTool } from './bash.js'

export {
  type BashInput,
  type BashToolOptions,
  bashTool,
  type ShellErrorCode,
  ShellToolError,
} from './bash.js'

/** The shell tools: `bash`. */
export function shellTools(options: BashToolOptions = {}): Tool<unknown>[] {
  return [bashTool(options) as Tool<unknown>]
}
