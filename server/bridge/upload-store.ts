import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { randomBytes } from 'node:crypto'

/**
 * Chunks of Nextcloud chunked uploads, kept on the bridge's disk until the
 * client assembles them (`MOVE …/.file`): the gateway only ever sees whole files.
 * Names were validated by the caller (see routes/chunked-upload.ts).
 */
export interface UploadStore {
  /** Creates an upload folder; false when it already exists. */
  create(userId: string, uploadId: string): Promise<boolean>
  exists(userId: string, uploadId: string): Promise<boolean>
  /** Writes one chunk from a stream; true when it replaced an earlier one. */
  putChunk(userId: string, uploadId: string, name: string, body: Readable): Promise<boolean>
  /** Chunks in assembly order (numeric-aware), with sizes and times. */
  chunks(userId: string, uploadId: string): Promise<{ name: string; size: number; modifiedMs: number }[]>
  /** One stream of all chunks in order. */
  assemble(userId: string, uploadId: string, names: string[]): Readable
  remove(userId: string, uploadId: string): Promise<void>
  /** Drops uploads untouched for longer than `maxAgeMs` (Nextcloud keeps them 24 h). */
  sweep(maxAgeMs?: number): Promise<void>
}

const byChunkOrder = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true })

export function createUploadStore(dir: string): UploadStore {
  const folder = (userId: string, uploadId: string) => join(dir, userId, uploadId)
  const isDir = async (path: string) => (await stat(path).catch(() => undefined))?.isDirectory() ?? false

  return {
    async create(userId, uploadId) {
      const path = folder(userId, uploadId)
      if (await isDir(path)) return false
      await mkdir(path, { recursive: true })
      return true
    },
    exists: (userId, uploadId) => isDir(folder(userId, uploadId)),
    async putChunk(userId, uploadId, name, body) {
      const target = join(folder(userId, uploadId), name)
      const replaced = (await stat(target).catch(() => undefined)) !== undefined
      // Write aside and rename, so an interrupted chunk never looks complete.
      const temp = join(folder(userId, uploadId), `.part-${randomBytes(6).toString('hex')}`)
      try {
        await writeWithoutDestroying(body, temp)
        await rename(temp, target)
      } catch (err) {
        await rm(temp, { force: true })
        throw err
      }
      return replaced
    },
    async chunks(userId, uploadId) {
      const path = folder(userId, uploadId)
      const names = (await readdir(path)).filter((n) => !n.startsWith('.')).sort(byChunkOrder)
      return Promise.all(names.map(async (name) => {
        const s = await stat(join(path, name))
        return { name, size: s.size, modifiedMs: s.mtimeMs }
      }))
    },
    assemble(userId, uploadId, names) {
      const path = folder(userId, uploadId)
      return Readable.from((async function* () {
        for (const name of names) yield* createReadStream(join(path, name))
      })())
    },
    remove: (userId, uploadId) => rm(folder(userId, uploadId), { recursive: true, force: true }),
    async sweep(maxAgeMs = 24 * 3600_000) {
      const now = Date.now()
      for (const user of await readdir(dir).catch(() => [] as string[])) {
        for (const upload of await readdir(join(dir, user)).catch(() => [] as string[])) {
          const s = await stat(join(dir, user, upload)).catch(() => undefined)
          if (s && now - s.mtimeMs > maxAgeMs) await rm(join(dir, user, upload), { recursive: true, force: true })
        }
      }
    },
  }
}

/**
 * Streams `body` into a new file. Unlike `pipeline`, a failed write (a full
 * disk) leaves the request alone instead of destroying it, so the error can
 * still be answered on its connection.
 */
function writeWithoutDestroying(body: Readable, file: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const out = createWriteStream(file, { flags: 'wx' })
    const onBodyError = (err: Error) => {
      out.destroy()
      reject(err)
    }
    body.once('error', onBodyError)
    out.once('error', (err) => {
      body.unpipe(out)
      body.off('error', onBodyError)
      reject(err)
    })
    out.once('finish', () => {
      body.off('error', onBodyError)
      resolve()
    })
    body.pipe(out)
  })
}
