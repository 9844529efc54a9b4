import { describe, expect, it } from 'vitest'
import { fileState, retrievableCopies } from '../../server/gateway/file-state.ts'
import type { Deal, GroupRecord, GroupState } from '../../server/gateway/content/index.ts'

const group = (state: GroupState, deals: Deal['state'][] = [], copies = 0): GroupRecord => ({
  id: 1,
  state,
  size: 1,
  retrievableCopies: copies,
  createdMs: 0,
  updatedMs: 0,
  deals: deals.map((s, i) => ({ provider: 'f01000', state: s, dealId: i, endEpoch: 1, isRetrievable: false })),
})

describe('file state from its groups (spec table)', () => {
  it('is staging with no group yet or while any group is writable, full or VRCARDone', () => {
    expect(fileState([])).toBe('staging')
    for (const s of ['writable', 'full', 'VRCARDone'] as const) {
      expect(fileState([group('ready_for_deals', ['active']), group(s)])).toBe('staging')
    }
  })
  it('is offloaded when every group is offloaded', () => {
    expect(fileState([group('offloaded', ['active']), group('offloaded')])).toBe('offloaded')
  })
  it('is partially_offloaded when every group has an active deal', () => {
    expect(fileState([group('ready_for_deals', ['active']), group('offloaded', ['proposed', 'active'])])).toBe('partially_offloaded')
  })
  it('is offloading otherwise', () => {
    expect(fileState([group('ready_for_deals')])).toBe('offloading')
    expect(fileState([group('ready_for_deals', ['active']), group('ready_for_deals', ['published'])])).toBe('offloading')
  })
  it('counts retrievable copies as the minimum over groups, 0 without groups', () => {
    expect(retrievableCopies([])).toBe(0)
    expect(retrievableCopies([group('offloaded', [], 3), group('offloaded', [], 2)])).toBe(2)
  })
})
