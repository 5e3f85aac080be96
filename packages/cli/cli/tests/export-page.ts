// Helpers of export.test.ts: headless Chromium (its DOM after a checking script ran, its
// screenshots) and a PNG reader, so a test can ask what a person would see.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { promisify } from 'node:util'
import { inflateSync } from 'node:zlib'

const run = promisify(execFile)

/** The Chromium binary, when there is one. */
export const CHROMIUM = ['/usr/bin/chromium', '/usr/bin/chromium-browser'].find((p) => existsSync(p))

export async function chromium(args: string[]): Promise<string> {
  const { stdout } = await run(
    CHROMIUM ?? '/usr/bin/chromium',
    ['--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', ...args],
    { timeout: 90_000, maxBuffer: 32 * 1024 * 1024 },
  )
  return stdout
}

/**
 * Loads a copy of the page with `probe` (a function body returning JSON-able facts about the
 * rendered DOM) appended as a script, in a window `width` wide, and returns what it found.
 * The page itself has no script; only this copy does.
 */
export async function probePage<T>(page: string, probe: string, width: number): Promise<T> {
  const html = await readFile(page, 'utf8')
  const copy = page.replace(/\.html$/u, `.probe-${width}.html`)
  const script = `<script>document.body.setAttribute('data-probe', JSON.stringify((() => {${probe}})()))</script>`
  await writeFile(copy, html.replace('</body>', `${script}</body>`))
  const dom = await chromium([
    `--window-size=${width},1200`,
    '--virtual-time-budget=2000',
    '--dump-dom',
    `file://${copy}`,
  ])
  const found = /data-probe="([^"]*)"/u.exec(dom)?.[1]
  if (found === undefined) throw new Error(`the probe did not run: ${dom.slice(0, 300)}`)
  const json = found
    .replace(/&quot;/gu, '"')
    .replace(/&lt;/gu, '<')
    .replace(/&gt;/gu, '>')
    .replace(/&amp;/gu, '&')
  return JSON.parse(json) as T
}

/** An 8-bit RGB or RGBA PNG (what Chromium writes), decoded. */
export interface Png {
  width: number
  height: number
  /** RGB of the pixel at x, y. */
  pixel(x: number, y: number): [number, number, number]
}

export async function readPng(path: string): Promise<Png> {
  const bytes = await readFile(path)
  if (bytes.subarray(0, 8).toString('hex') !== '89504e470d0a1a0a') throw new Error(`${path} is not a PNG`)
  let at = 8
  let width = 0
  let height = 0
  let channels = 0
  const data: Buffer[] = []
  while (at < bytes.length) {
    const length = bytes.readUInt32BE(at)
    const type = bytes.toString('latin1', at + 4, at + 8)
    const body = bytes.subarray(at + 8, at + 8 + length)
    if (type === 'IHDR') {
      width = body.readUInt32BE(0)
      height = body.readUInt32BE(4)
      const [depth, color, , , interlace] = [body[8], body[9], body[10], body[11], body[12]]
      if (depth !== 8 || interlace !== 0 || (color !== 2 && color !== 6))
        throw new Error(`unsupported PNG (depth ${depth}, color ${color}, interlace ${interlace})`)
      channels = color === 2 ? 3 : 4
    }
    if (type === 'IDAT') data.push(body)
    at += 12 + length
  }
  const raw = inflateSync(Buffer.concat(data))
  const stride = width * channels
  const out = Buffer.alloc(height * stride)
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1))
    for (let i = 0; i < stride; i++) {
      const left = i >= channels ? out[y * stride + i - channels]! : 0
      const up = y > 0 ? out[(y - 1) * stride + i]! : 0
      const upLeft = y > 0 && i >= channels ? out[(y - 1) * stride + i - channels]! : 0
      const paeth = () => {
        const p = left + up - upLeft
        const [pa, pb, pc] = [Math.abs(p - left), Math.abs(p - up), Math.abs(p - upLeft)]
        return pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft
      }
      const predicted =
        filter === 0
          ? 0
          : filter === 1
            ? left
            : filter === 2
              ? up
              : filter === 3
                ? (left + up) >> 1
                : filter === 4
                  ? paeth()
                  : undefined
      if (predicted === undefined) throw new Error(`bad PNG filter ${filter}`)
      out[y * stride + i] = (line[i]! + predicted) & 0xff
    }
  }
  return {
    width,
    height,
    pixel: (x, y) => {
      const i = y * stride + x * channels
      return [out[i]!, out[i + 1]!, out[i + 2]!]
    },
  }
}

/**
 * The horizontal extent of what is drawn: the leftmost and rightmost columns whose pixels
 * differ from the page background (the top-left pixel) in at least `minRows` rows.
 */
export function inkColumns(png: Png, minRows = 20): { left: number; right: number } {
  const bg = png.pixel(0, 0)
  const counts = new Array<number>(png.width).fill(0)
  for (let y = 0; y < png.height; y += 2)
    for (let x = 0; x < png.width; x++) {
      const p = png.pixel(x, y)
      if (Math.abs(p[0] - bg[0]) + Math.abs(p[1] - bg[1]) + Math.abs(p[2] - bg[2]) > 24) counts[x]!++
    }
  const inked = counts.map((c, x) => (c >= minRows / 2 ? x : -1)).filter((x) => x >= 0)
  return { left: inked[0] ?? -1, right: inked.at(-1) ?? -1 }
}
