#!/usr/bin/env node
// Runs the built CLI when there is one (published package), else the TypeScript source
// through tsx (inside the workspace).
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const built = new URL('../dist/cli.js', import.meta.url)
if (existsSync(fileURLToPath(built))) {
  await import(built.href)
} else {
  const { register } = await import('tsx/esm/api')
  register()
  await import(new URL('../src/cli.ts', import.meta.url).href)
}
