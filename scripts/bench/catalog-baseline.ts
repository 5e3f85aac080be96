// The cold baseline of `pnpm bench catalog`: a fresh process that loads the TypeScript
// compiler (ts-morph) and creates the program and checker for the repository's sources —
// the part of a cold `gen-persistence-catalog` or `verify` run no generator can skip.
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { loadProject } from '../catalog/workspace.js'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
loadProject(root).project.getProgram().compilerObject.getTypeChecker()
