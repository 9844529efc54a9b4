import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, readdir, rename, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { randomBytes } from 'node:crypto'

/**
 * Chunks of Nextcloud chunked uploads, kept on the bridge's disk until the
 * client assembles them (`MOVE …/.file`): the gateway only ever sees whole files.
 * Names were validated by the caller (see routes/chunked-upload.ts): an
 * upload id never starts with a dot, so the store's own entries beside the
 * upload folders (`.part-*` chunks being written, `.assembling-*` uploads
 * being sent) can never be named by a client.
 *
 * Every change to an upload folder (a chunk landing, the folder deleted,
 * the upload claimed for assembly) runs one at a time per folder, so a chunk
 * PUT, a DELETE and the final MOVE raced against each other each get a clear
 * answer (the folder exists or it does not) and leave nothing behind.
 */
export interface UploadStore {
  /** Creates an upload folder: false when it already exists, 'full' when the user holds `maxPerUser` already. */
  create(userId: string, uploadId: string): Promise<boolean | 'full'>
  exists(userId: string, uploadId: string): Promise<boolean>
  /** Writes one chunk from a stream: 'replaced' or 'created', 'gone' when the folder was removed meanwhile (nothing kept). */
  putChunk(userId: string, uploadId: string, name: string, body: Readable): Promise<'created' | 'replaced' | 'gone'>
  /** Chunks in assembly order (numeric-aware), with sizes and times. */
  chunks(userId: string, uploadId: string): Promise<{ name: string; size: number; modifiedMs: number }[]>
  /** False when the folder was not there (already gone, or being assembled). */
  remove(userId: string, uploadId: string): Promise<boolean>
  /**
   * Takes the upload out of the client's reach for assembly: later chunk
   * PUTs, DELETEs and MOVEs of it find nothing. Undefined when it is gone.
   */
  claim(userId: string, uploadId: string): Promise<ClaimedUpload | undefined>
  /** Examines up to `batch` upload folders, removing those untouched for `maxAgeMs` (Nextcloud keeps them 24 h). */
  sweepStep(maxAgeMs?: number, batch?: number): Promise<number>
  /** Sweeps a step every `intervalMs`, one step at a time, off the request path. */
  startSweeping(o: { intervalMs: number; maxAgeMs?: number; batch?: number; onError: (err: unknown) => void }): () => void
}

export interface ClaimedUpload {
  chunks: { name: string; size: number }[]
  /** One stream of all chunks in order. */
  stream(): Readable
  /** The upload is done (or given up): its chunks go. */
  discard(): Promise<void>
  /** Assembly failed: the upload is back where the client left it, to try again, unless a new one took its name. */
  release(): Promise<void>
}

export interface UploadStoreOptions {
  /** Unfinished uploads one user may hold at once (default 500). */
  maxPerUser?: number
}

const byChunkOrder = (a: string, b: string) => a.localeCompare(b, 'en', { numeric: true })
const isUploadName = (n: string) => !n.startsWith('.')
const RM = { recursive: true, force: true, maxRetries: 3 } as const

export function createUploadStore(dir: string, opts: UploadStoreOptions = {}): UploadStore {
  const maxPerUser = opts.maxPerUser ?? 500
  const folder = (userId: string, uploadId: string) => join(dir, userId, uploadId)
  const aside = (userId: string, kind: 'part' | 'assembling') => join(dir, userId, `.${kind}-${randomBytes(8).toString('hex')}`)
  const isDir = async (path: string) => (await stat(path).catch(() => undefined))?.isDirectory() ?? false

  // One change at a time per upload folder.
  const queues = new Map<string, Promise<unknown>>()
  const serially = <T>(userId: string, uploadId: string, fn: () => Promise<T>): Promise<T> => {
    const key = `${userId}/${uploadId}`
    const run = (queues.get(key) ?? Promise.resolve()).then(fn, fn)
    const settled = run.catch(() => undefined)
    queues.set(key, settled)
    void settled.then(() => {
      if (queues.get(key) === settled) queues.delete(key)
    })
    return run
  }

  const listChunks = async (path: string) => {
    const names = (await readdir(path)).filter(isUploadName).sort(byChunkOrder)
    return Promise.all(
      names.map(async (name) => {
        const s = await stat(join(path, name))
        return { name, size: s.size, modifiedMs: s.mtimeMs }
      }),
    )
  }

  // Paths still to examine in the current sweep round.
  const sweepQueue: string[] = []
  const refillSweepQueue = async () => {
    for (const user of await readdir(dir).catch(() => [] as string[])) {
      for (const entry of await readdir(join(dir, user)).catch(() => [] as string[])) sweepQueue.push(join(dir, user, entry))
    }
  }

  const store: UploadStore = {
    create: (userId, uploadId) =>
      serially(userId, uploadId, async () => {
        const path = folder(userId, uploadId)
        if (await isDir(path)) return false
        const held = (await readdir(join(dir, userId)).catch(() => [] as string[])).filter(isUploadName).length
        if (held >= maxPerUser) return 'full'
        await mkdir(path, { recursive: true })
        return true
      }),
    exists: (userId, uploadId) => isDir(folder(userId, uploadId)),
    async putChunk(userId, uploadId, name, body) {
      // Written aside, outside the folder, and renamed in: an interrupted chunk never looks complete, and
      // a DELETE of the folder never meets a half-written file in it.
      const temp = aside(userId, 'part')
      try {
        try {
          await writeWithoutDestroying(body, temp)
        } catch (err) {
          // The user's uploads area itself is gone (every upload removed meanwhile).
          if ((err as { code?: string }).code === 'ENOENT' && !(await isDir(join(dir, userId)))) return 'gone'
          throw err
        }
        return await serially(userId, uploadId, async () => {
          const path = folder(userId, uploadId)
          if (!(await isDir(path))) return 'gone' as const
          const target = join(path, name)
          const replaced = (await stat(target).catch(() => undefined)) !== undefined
          await rename(temp, target)
          return replaced ? ('replaced' as const) : ('created' as const)
        })
      } finally {
        await rm(temp, { force: true })
      }
    },
    chunks: (userId, uploadId) => listChunks(folder(userId, uploadId)),
    remove: (userId, uploadId) =>
      serially(userId, uploadId, async () => {
        const path = folder(userId, uploadId)
        if (!(await isDir(path))) return false
        await rm(path, RM)
        return true
      }),
    claim: (userId, uploadId) =>
      serially(userId, uploadId, async () => {
        const path = folder(userId, uploadId)
        if (!(await isDir(path))) return undefined
        const taken = aside(userId, 'assembling')
        await rename(path, taken)
        const chunks = await listChunks(taken)
        return {
          chunks,
          stream: () =>
            Readable.from(
              (async function* () {
                for (const c of chunks) yield* createReadStream(join(taken, c.name))
              })(),
            ),
          discard: () => rm(taken, RM),
          release: () =>
            serially(userId, uploadId, async () => {
              if (await isDir(path)) return void (await rm(taken, RM))
              await rename(taken, path)
            }),
        }
      }),
    async sweepStep(maxAgeMs = 24 * 3600_000, batch = 200) {
      if (sweepQueue.length === 0) await refillSweepQueue()
      const now = Date.now()
      const step = sweepQueue.splice(0, batch)
      for (const path of step) {
        const s = await stat(path).catch(() => undefined)
        if (s && now - s.mtimeMs > maxAgeMs) await rm(path, RM)
      }
      return step.length
    },
    startSweeping(o) {
      let running = false
      const timer = setInterval(() => {
        if (running) return
        running = true
        store
          .sweepStep(o.maxAgeMs, o.batch)
          .catch(o.onError)
          .finally(() => (running = false))
      }, o.intervalMs)
      timer.unref()
      return () => clearInterval(timer)
    },
  }
  return store
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
