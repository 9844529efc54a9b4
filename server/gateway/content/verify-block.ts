import { CID } from 'multiformats/cid'
import { sha256 } from 'multiformats/hashes/sha2'

/** Whether `bytes` hash to `cid` (every block here is sha2-256). */
export async function blockMatchesCid(cid: CID | string, bytes: Uint8Array): Promise<boolean> {
  const c = typeof cid === 'string' ? CID.parse(cid) : cid
  if (c.multihash.code !== sha256.code) return false
  const digest = (await sha256.digest(bytes)).digest
  const want = c.multihash.digest
  if (digest.length !== want.length) return false
  for (let i = 0; i < digest.length; i++) if (digest[i] !== want[i]) return false
  return true
}
