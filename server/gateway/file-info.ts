import express, { Router, type Request, type Response, type NextFunction } from 'express'
import type { FileInfoFile, FileInfoGroup, FileInfoResponse } from '../shared/contracts/file-info.ts'
import { FileInfoRequestSchema } from '../shared/contracts/file-info.ts'
import { describeIssues } from '../shared/contracts/zod-issues.ts'
import type { Logger } from '../shared/logger.ts'
import { canHaveDeals, type ContentStore, type GroupRecord } from './content/index.ts'
import { badRequest, notFound } from './errors.ts'
import { folderGroupIds, groupIdsOfKey, stateGroupIds, type FolderIndex } from './folder-index.ts'
import type { GroupReasonCode } from './group-reason.ts'
import { fileState, retrievableCopies, type FileState } from './file-state.ts'
import { nameOf, parentOf, type Namespace } from './namespace.ts'
import type { RecordCache } from './record-cache.ts'

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
}

const MAX_PATH_LENGTH = 4096

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
    // What the state and copies are worked out from: for a folder, its files' groups (folder-index.ts, stateGroupIds).
    let stateGroups: GroupRecord[]
    if (entry.kind === 'file') {
      cid = entry.cid ?? ''
      groups = entry.cid ? await content.groupsOf(entry.cid) : []
      stateGroups = groups
    } else {
      // Kept per folder and made from its direct children (folder-index.ts): no walk of everything below per record.
      const summary = await deps.folders.summary(path)
      cid = summary.cid
      const ids = await folderGroupIds(summary, content)
      groups = await content.groupsWithIds([...ids])
      const byId = new Map(groups.map((g) => [g.id, g]))
      stateGroups = [...stateGroupIds(summary, ids)].flatMap((id) => byId.get(id) ?? [])
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
        state: fileState(stateGroups),
        retrievableCopies: retrievableCopies(stateGroups),
        groups: await Promise.all(groups.map(async (g) => groupView(g, await deps.reasonOf?.(g), filesPerGroup?.get(g.id)))),
        ...(fileCounts ? { fileCounts } : {}),
      }
    }
    return { success: true, result: { file } }
  }

  return router
}
