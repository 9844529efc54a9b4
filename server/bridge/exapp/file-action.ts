/**
 * The handler of the Files action this ExApp registers (lifecycle.ts). AppAPI's
 * Files plugin posts `{ files: [nodeInfo…] }` to it for a v2 action
 * (nextcloud/app_api src/filesplugin.js, registerFileAction33 and
 * buildNodeInfo: fileId, name, directory, userId, …) through its proxy, with
 * AppAPI's headers for the user. The answer is each file's Filecoin state and
 * CID, or why there is none, checked like the metadata route: the path must
 * be on a mapped mount and in the user's tree.
 */
import type { Request, Response } from 'express'
import { z } from 'zod'
import type { NetworkClock } from '../../shared/epochs.ts'
import type { Authenticate, Caller } from '../auth/caller.ts'
import { toMetadataFile } from '../convert.ts'
import { BridgeError, badRequest, setSurface, unauthorized } from '../errors.ts'
import type { GatewayClient } from '../gateway-client.ts'
import { normaliseUserPath } from '../user-path.ts'

const FileActionBodySchema = z.object({
  files: z
    .array(z.looseObject({ fileId: z.union([z.number(), z.string()]), name: z.string().min(1), directory: z.string() }))
    .min(1)
    .max(100),
})

export interface FileActionDeps {
  authenticate: Authenticate
  gateway: GatewayClient
  clock: NetworkClock
  toGatewayPath: (caller: Caller, userPath: string) => Promise<string>
}

export function fileActionHandler(deps: FileActionDeps) {
  return async (req: Request, res: Response) => {
    setSurface(req, 'app')
    const caller = await deps.authenticate({ method: req.method, headers: req.headers, address: req.ip ?? 'unknown' })
    if (!caller) throw unauthorized()
    const parsed = FileActionBodySchema.safeParse(req.body)
    if (!parsed.success) throw badRequest(`Not a Files action request: ${parsed.error.issues[0]?.message ?? 'bad body'}`)
    const files = await Promise.all(
      parsed.data.files.map(async ({ fileId, name, directory }) => {
        const raw = `${directory.replace(/\/+$/, '')}/${name}`
        try {
          const userPath = normaliseUserPath(raw, { encoding: 'literal', userId: caller.user.id })
          const record = await deps.gateway.fileInfo(await deps.toGatewayPath(caller, userPath))
          const file = toMetadataFile(record, userPath, deps.clock)
          return { fileId, path: userPath, state: file.details.state, cid: file.cid }
        } catch (err) {
          if (!(err instanceof BridgeError)) throw err
          return { fileId, path: raw, error: { code: err.code, message: err.message } }
        }
      }),
    )
    res.json({ success: true, files })
  }
}
