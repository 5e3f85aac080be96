// Hashes: SHA-256 for every digest the catalog publishes; SHA-1 only for internal ordering keys.
import { createHash } from 'node:crypto'

export const sha1 = (s: string) => createHash('sha1').update(s).digest('base64')
export const sha256 = (s: string) => createHash('sha256').update(s).digest('hex')
