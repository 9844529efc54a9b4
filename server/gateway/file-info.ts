import express, { Router, type Request, type Response, type NextFunction } from 'express'
import { formatUnits } from 'viem'
import type { FileInfoFile, FileInfoGroup, FileInfoResponse } from '../shared/contracts/file-info.ts'
import { FileInfoRequestSchema } from '../shared/contracts/file-info.ts'
import { describeIssues } from '../shared/contracts/zod-issues.ts'
import type { Logger } from '../shared/logger.ts'
import { canHaveDeals, type ContentStore, type GroupRecord } from './content/index.ts'
import { badRequest, notFound } from './errors.ts'
import { folderGroupIds, groupIdsOfKey, type FolderIndex } from './folder-index.ts'
import type { GroupReasonCode } from './group-reason.ts'
import { fileState, retrievableCopies, type FileState } from './file-state.ts'
import { nameOf, parentOf, type Namespace } from './namespace.ts'
import type { RecordCache } from './record-cache.ts'
import type { MarketFunding, PdpFunding } from './deals/index.ts'

export interface FileInfoDeps {
  namespace: Namespace
  content: ContentStore
  /** Folders' CIDs and counts, kept up to date as the tree changes. */
  folders: FolderIndex
  logger: Logger
  /** Answers kept until something they are made of changes. */
  records: RecordCache
  /** Why a group is not further along yet, as its code and sentence (see group-reason.ts); no `reason` without it. */
  reasonOf?: (g: GroupRecord) => Promise<{ code: GroupReasonCode; text: string } | undefined>
  /** Said in the `Filecoin-Network` header, so that whoever links to this gateway can check it is the network they meant. */
  network?: string
  /** Why no deals are proposed right now (no DataCap, no escrow), said in the `Filecoin-Deals-Blocked` header for the admin's link test. */
  dealsBlocked?: () => string | undefined
  /** Which deals it proposes now (verified, or unverified and why), said in the `Filecoin-Deal-Kind` header. */
  dealKind?: () => string | undefined
  /** How long the Onchain Cloud account pays for PDP copies, said in the `Filecoin-Onchain-Cloud` header. */
  onchainCloud?: () => PdpFunding | undefined
  /** What pays for deal-market copies, said in the `Filecoin-Deal-Market` header. */
  dealMarket?: () => MarketFunding | undefined
}

/** Header naming the network a gateway's deals are on (ours sends it; CIDgravity's does not). */
export const NETWORK_HEADER = 'Filecoin-Network'
/** Header saying why the gateway proposes no deals right now; absent while it can. */
export const DEALS_BLOCKED_HEADER = 'Filecoin-Deals-Blocked'
export const DEAL_KIND_HEADER = 'Filecoin-Deal-Kind'
/** Header with the Onchain Cloud account's standing: `status=WARNING; funds=12.5; funded-until=2027-03-03T10:00:00.000Z` (funds in USDFC). */
export const ONCHAIN_CLOUD_HEADER = 'Filecoin-Onchain-Cloud'
/** Header with the deal market's funds: `datacap=34359738368; escrow=0.5; locked=0.1; deals-until=2028-03-03T10:00:00.000Z` (DataCap in bytes or `none`, escrow in FIL; deals-until only with active deals). */
export const DEAL_MARKET_HEADER = 'Filecoin-Deal-Market'

const MAX_PATH_LENGTH = 4096

/** A wall-clock time for a header, held within what a Date can say. */
const isoTime = (ms: number) => new Date(Math.min(Math.max(ms, 0), 8.64e15)).toISOString()

/**
 * Turns a client path into a namespace path: taken literally (never
 * URL-decoded), in NFC as WebDAV stores names, `.` and doubled slashes
 * dropped, no trailing slash. `..`, NUL and backslashes are refused
 * rather than resolved, so a path can never name anything outside the tree.
 */
export function normaliseFilePath(input: string): string {
  if (input.length === 0 || input.length > MAX_PATH_LENGTH) throw badRequest(`filePath must be 1 to ${MAX_PATH_LENGTH} characters`)
  if (!input.startsWith('/')) throw badRequest('filePath must start with "/"')
  if (input.includes('\0') || input.includes('\\')) throw badRequest('filePath must not contain NUL or backslash characters')
  const parts = input
    .normalize('NFC')
    .split('/')
    .filter((p) => p !== '' && p !== '.')
  if (parts.includes('..')) throw badRequest('filePath must not contain ".." segments')
  return '/' + parts.join('/')
}

const groupView = (
  g: GroupRecord,
  reason: { code: GroupReasonCode; text: string } | undefined,
  fileCount: number | undefined,
): FileInfoGroup => ({
  groupId: g.id,
  state: g.state,
  ...(g.pieceCid ? { pieceCid: g.pieceCid } : {}),
  retrievableCopies: g.retrievableCopies,
  // Deals only for states that can have them (spec: "returned only if the group is in a state that can have deals").
  ...(canHaveDeals(g.state) ? { deals: g.deals } : {}),
  ...(canHaveDeals(g.state) && g.failedDeals?.length ? { failedDeals: g.failedDeals } : {}),
  ...(reason ? { reason: reason.text, reasonCode: reason.code } : {}),
  ...(fileCount !== undefined ? { fileCount } : {}),
})

/**
 * `POST /file-info` body `{ filePath, verbose? }` → `{ success: true, result: { file: { cid, path, file, details? } } }`.
 *
 * Not found: we answer 404 `{ success: false, error: "File or folder not found" }`.
 * DESIGN.md lets us pick 404 or the real gateway's 200; a 404 lets HTTP
 * clients and the bridge tell "missing" from "found" without parsing text.
 */
export function createFileInfoRouter(deps: FileInfoDeps): Router {
  const { namespace, content } = deps
  const router = Router()
  // Any content type is read as JSON: clients of the real gateway do not always set it.
  const parseJson = express.json({ limit: '1mb', strict: true, type: () => true })

  router.post('/file-info', parseJson, (req: Request, res: Response, next: NextFunction) => {
    if (deps.network) res.set(NETWORK_HEADER, deps.network)
    const blocked = deps.dealsBlocked?.()
    // A header value is Latin-1 text on one line.
    if (blocked) res.set(DEALS_BLOCKED_HEADER, blocked.replace(/[^\x20-\x7e]/g, '?').slice(0, 500))
    const kind = deps.dealKind?.()
    if (kind) res.set(DEAL_KIND_HEADER, kind.replace(/[^\x20-\x7e]/g, '?').slice(0, 500))
    const funding = deps.onchainCloud?.()
    if (funding)
      res.set(
        ONCHAIN_CLOUD_HEADER,
        `status=${funding.status}; funds=${formatUnits(funding.funds, 18)}; funded-until=${isoTime(funding.fundedUntilMs)}`,
      )
    const market = deps.dealMarket?.()
    if (market) {
      const until = market.dealsUntilMs === undefined ? '' : `; deals-until=${isoTime(market.dealsUntilMs)}`
      res.set(
        DEAL_MARKET_HEADER,
        `datacap=${market.dataCap ?? 'none'}; escrow=${formatUnits(market.escrow, 18)}; locked=${formatUnits(market.locked, 18)}${until}`,
      )
    }
    handle(req)
      .then((text) => res.status(200).type('json').send(text))
      .catch(next)
  })

  async function handle(req: Request): Promise<string> {
    const parsed = FileInfoRequestSchema.safeParse(req.body)
    if (!parsed.success) throw badRequest(describeIssues(parsed.error.issues))
    const { filePath, filepath, verbose } = parsed.data
    if (filePath !== undefined && filepath !== undefined && filePath !== filepath) {
      throw badRequest('Give filePath or filepath, not both')
    }
    const raw = filePath ?? filepath
    if (raw === undefined) throw badRequest('filePath is required')
    const path = normaliseFilePath(raw)
    return deps.records.get(`${verbose ? 'v' : '-'}${path}`, async () => JSON.stringify(await record(path, verbose)))
  }

  async function record(path: string, verbose: boolean | undefined): Promise<FileInfoResponse> {
    const entry = await namespace.get(path)
    if (!entry) throw notFound()

    let cid: string
    let groups: GroupRecord[]
    // For a folder: how many of the files below it are in each state, and in each group.
    let fileCounts: Partial<Record<FileState, number>> | undefined
    let filesPerGroup: Map<number, number> | undefined
    if (entry.kind === 'file') {
      cid = entry.cid ?? ''
      groups = entry.cid ? await content.groupsOf(entry.cid) : []
    } else {
      // Kept per folder and made from its direct children (folder-index.ts): no walk of everything below per record.
      const summary = await deps.folders.summary(path)
      cid = summary.cid
      const ids = await folderGroupIds(summary, content)
      groups = await content.groupsWithIds([...ids])
      const byId = new Map(groups.map((g) => [g.id, g]))
      fileCounts = {}
      // A group holding only the folder's own directory nodes counts 0 files.
      filesPerGroup = new Map([...ids].map((id) => [id, 0]))
      for (const [key, count] of summary.filesByGroups) {
        const state = fileState(groupIdsOfKey(key).flatMap((id) => byId.get(id) ?? []))
        fileCounts[state] = (fileCounts[state] ?? 0) + count
        for (const id of groupIdsOfKey(key)) filesPerGroup.set(id, (filesPerGroup.get(id) ?? 0) + count)
      }
    }

    const file: FileInfoFile = { cid, path: parentOf(path), file: nameOf(path) }
    if (verbose) {
      file.details = {
        state: fileState(groups),
        retrievableCopies: retrievableCopies(groups),
        groups: await Promise.all(groups.map(async (g) => groupView(g, await deps.reasonOf?.(g), filesPerGroup?.get(g.id)))),
        ...(fileCounts ? { fileCounts } : {}),
      }
    }
    return { success: true, result: { file } }
  }

  return router
}
