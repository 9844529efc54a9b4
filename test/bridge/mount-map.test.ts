import { describe, expect, it } from 'vitest'
import { createMountMap } from '../../server/bridge/mount-map.ts'

describe('External Storage mounts → gateway paths', () => {
  const mounts = createMountMap([
    { mountPoint: '/Filecoin', gatewayPath: '/{user}' },
    { mountPoint: '/Filecoin/Team', gatewayPath: '/shared/team' },
    { mountPoint: '/Archive/', gatewayPath: '/' },
  ])

  it('maps a path under a mount, the mount itself, and the longest matching mount', () => {
    expect(mounts.toGateway('alice', '/Filecoin/docs/a.pdf')).toBe('/alice/docs/a.pdf')
    expect(mounts.toGateway('alice', '/Filecoin')).toBe('/alice')
    expect(mounts.toGateway('alice', '/Filecoin/Team/plan.txt')).toBe('/shared/team/plan.txt')
    expect(mounts.toGateway('bob', '/Archive/2020/x')).toBe('/2020/x')
  })

  it('matches whole folder names only, and nothing outside the mounts', () => {
    expect(mounts.toGateway('alice', '/Filecoin2/a.pdf')).toBeUndefined()
    expect(mounts.toGateway('alice', '/Documents/a.pdf')).toBeUndefined()
    expect(mounts.toGateway('alice', '/')).toBeUndefined()
    expect(createMountMap([]).toGateway('alice', '/Filecoin/a')).toBeUndefined()
  })
})
