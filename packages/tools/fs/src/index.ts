import type { Tool } from '@keel/tools'
import { type EditFileOptions, editFileTool } from './edit.js'
import { type GlobOptions, globTool } from './glob.js'
import { type GrepOptions, grepTool } from './grep.js'
import { type ListDirOptions, listDirTool } from './list.js'
import { type ReadFileOptions, readFileTool } from './read.js'
import { type WriteFileOptions, writeFileTool } from './write.js'

export { DEFAULT_IGNORES, type FsErrorCode, FsToolError } from './common.js'
export { type EditFileInput, type EditFileOptions, editFileTool } from './edit.js'
export { type DecodedText, decodeText, encodeText, type TextEncoding } from './encoding.js'
export { type GlobInput, type GlobOptions, globTool } from './glob.js'
export { type GrepInput, type GrepOptions, grepTool, searchFacts } from './grep.js'
export { type ListDirInput, type ListDirOptions, listDirTool } from './list.js'
export { type ReadFileInput, type ReadFileOptions, readFileTool } from './read.js'
export { readStateProjection } from './read-state.js'
export { findRipgrep, type GrepEngine } from './search.js'
export { type WriteFileInput, type WriteFileOptions, writeFileTool } from './write.js'

/** Per-tool options of {@link fsTools}. */
export interface FsToolsOptions {
  read?: ReadFileOptions
  write?: WriteFileOptions
  edit?: EditFileOptions
  list?: ListDirOptions
  glob?: GlobOptions
  grep?: GrepOptions
}

/** All six fs tools: read_file, write_file, edit_file, list_dir, glob, grep. */
export function fsTools(options: FsToolsOptions = {}): Tool<unknown>[] {
  return [
    readFileTool(options.read),
    writeFileTool(options.write),
    editFileTool(options.edit),
    listDirTool(options.list),
    globTool(options.glob),
    grepTool(options.grep),
  ] as Tool<unknown>[]
}
