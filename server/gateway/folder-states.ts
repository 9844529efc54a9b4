import express, { Router, type Request, type Response, type NextFunction } from 'express'
import {
  GatewayFolderStatesRequestSchema,
  isAttentionCode,
  type AttentionReasonCode,
  type GatewayFolderEntry,
  type GatewayFolderStatesResponse,
} from '../shared/contracts/folder-states.ts'
import { describeIssues } from '../shared/contracts/zod-issues.ts'
import { etagOf, namesEtag } from '../shared/etag.ts'
import type { GroupRecord } from './content/index.ts'
import { badRequest, notFound } from './errors.ts'
import { normaliseFilePath, type FileInfoDeps } from './file-info.ts'
import { fileState, retrievableCopies } from './file-state.ts'
import { folderGroupIds, stateGroupIds } from './folder-index.ts'
import { nameOf } from './namespace.ts'

export type FolderStatesDeps = Pick<FileInfoDeps, 'namespace' | 'content' | 'folders' | 'records' | 'reasonOf'>

/**
 * `POST /folder-states` body `{ folderPath }` → the state of each direct entry
 * of a folder, for the Files list's badges. One request per listing: one query
 * for the files' groups, one kept summary per subfolder, one query for all the
 * groups, and each group's reason worked out once however many entries share it.
 * The answer is kept as the records are (`records`, dropped on any write) with
 * an ETag of its bytes: a request whose `If-None-Match` names it gets 304 and
 * no body, so a bridge that keeps the last answer re-reads nothing unchanged.
 */
export function createFolderStatesRouter(deps: FolderStatesDeps): Router {
  const { namespace, content, folders } = deps
  const router = Router()
  const parseJson = express.json({ limit: '64kb', strict: true, type: () => true })

  router.post('/folder-states', parseJson, (req: Request, res: Response, next: NextFunction) => {
    const parsed = GatewayFolderStatesRequestSchema.safeParse(req.body)
    if (!parsed.success) return next(badRequest(describeIssues(parsed.error.issues)))
    let path: string
    try {
      path = normaliseFilePath(parsed.data.folderPath)
    } catch (err) {
      return next(err)
    }
    deps.records
      .get(`d${path}`, async () => {
        // JSON.stringify writes no line break: the ETag goes before the first one.
        const json = JSON.stringify(await listing(path))
        return `${etagOf(json)}\n${json}`
      })
      .then((kept) => {
        const cut = kept.indexOf('\n')
        const etag = kept.slice(0, cut)
        res.setHeader('etag', etag)
        if (namesEtag(req.headers['if-none-match'], etag)) return void res.status(304).end()
        res
          .status(200)
          .type('json')
          .send(kept.slice(cut + 1))
      })
      .catch(next)
  })

  async function listing(path: string): Promise<GatewayFolderStatesResponse> {
    const folder = await namespace.get(path)
    if (!folder) throw notFound('Folder')
    if (folder.kind !== 'dir') throw badRequest('folderPath names a file, not a folder')
    const children = await namespace.children(path)

    const fileCids = children.flatMap((c) => (c.kind === 'file' && c.cid ? [c.cid] : []))
    const fileGroups = await content.groupIdsOfMany(fileCids)
    // A sub-folder shows its files' groups (folder-index.ts, stateGroupIds), as its record does.
    // Its attention comes from every group, its own directory nodes' too.
    const folderSummaries = new Map<string, { cid: string; ids: Set<number>; stateIds: Set<number> }>()
    for (const child of children) {
      if (child.kind !== 'dir') continue
      const summary = await folders.summary(child.path)
      const ids = await folderGroupIds(summary, content)
      folderSummaries.set(child.path, { cid: summary.cid, ids, stateIds: stateGroupIds(summary, ids) })
    }

    const allIds = new Set<number>()
    for (const ids of fileGroups.values()) for (const id of ids) allIds.add(id)
    for (const { ids } of folderSummaries.values()) for (const id of ids) allIds.add(id)
    const groups = new Map((await content.groupsWithIds([...allIds])).map((g) => [g.id, g]))

    const reasons = new Map<number, Promise<{ code: AttentionReasonCode; reason: string } | undefined>>()
    const attentionOf = (g: GroupRecord) => {
      let found = reasons.get(g.id)
      if (!found) {
        found = (deps.reasonOf?.(g) ?? Promise.resolve(undefined)).then((r) =>
          r && isAttentionCode(r.code) ? { code: r.code, reason: r.text } : undefined,
        )
        reasons.set(g.id, found)
      }
      return found
    }

    const entries: GatewayFolderEntry[] = []
    for (const child of children) {
      const folderSummary = folderSummaries.get(child.path)
      const ids = folderSummary ? [...folderSummary.ids] : child.cid ? (fileGroups.get(child.cid) ?? []) : []
      const held = ids.flatMap((id) => groups.get(id) ?? [])
      const shown = folderSummary ? [...folderSummary.stateIds].flatMap((id) => groups.get(id) ?? []) : held
      let attention: GatewayFolderEntry['attention']
      for (const g of held) {
        attention = await attentionOf(g)
        if (attention) break
      }
      const cid = folderSummary?.cid ?? child.cid
      entries.push({
        name: nameOf(child.path),
        kind: child.kind,
        ...(cid ? { cid } : {}),
        state: fileState(shown),
        retrievableCopies: retrievableCopies(shown),
        ...(attention ? { attention } : {}),
      })
    }
    return { success: true, result: { folder: { path, entries } } }
  }

  return router
}
