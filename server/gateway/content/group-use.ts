/**
 * Groups an upload uses now (its blocks were written there, or found there
 * already: deduplicated), and for a while after it ends: its file goes into
 * the tree only after the content store is done, so a group it deduplicated
 * against may look dead in between. Retirement passes them over (retire/).
 */
export interface GroupUse {
  /** An upload starts using the group. */
  begin(groupId: number): void
  /** The upload is over with these groups. */
  end(groupIds: Iterable<number>): void
  /** Used now, or within the last `lingerMs`. */
  inUse(groupId: number): boolean
}

export function createGroupUse(o: { lingerMs: number; now?: () => number }): GroupUse {
  const now = o.now ?? Date.now
  const users = new Map<number, number>()
  const endedMs = new Map<number, number>()
  return {
    begin(groupId) {
      users.set(groupId, (users.get(groupId) ?? 0) + 1)
    },
    end(groupIds) {
      const t = now()
      for (const id of groupIds) {
        const left = (users.get(id) ?? 1) - 1
        if (left > 0) users.set(id, left)
        else users.delete(id)
        endedMs.set(id, t)
      }
      // Forgotten once past the linger: the map holds only recent uploads' groups.
      for (const [id, ms] of endedMs) if (t - ms >= o.lingerMs) endedMs.delete(id)
    },
    inUse(groupId) {
      if (users.has(groupId)) return true
      const ms = endedMs.get(groupId)
      return ms !== undefined && now() - ms < o.lingerMs
    },
  }
}
