import { describe, expect, it } from 'vitest'
import { createPathMap } from '../../server/bridge/path-map.ts'

describe('path map', () => {
  const byUser = createPathMap('/{user}')

  it("puts a user's files in their own gateway folder", () => {
    expect(byUser.rootOf('alice')).toBe('/alice')
    expect(byUser.toGateway('alice', '/')).toBe('/alice')
    expect(byUser.toGateway('alice', '/docs/a.txt')).toBe('/alice/docs/a.txt')
  })

  it("maps gateway paths back, and only the user's own", () => {
    expect(byUser.toUser('alice', '/alice/docs/a.txt')).toBe('/docs/a.txt')
    expect(byUser.toUser('alice', '/alice')).toBe('/')
    expect(byUser.toUser('alice', '/alice/')).toBe('/')
    expect(byUser.toUser('alice', '/alice/docs/')).toBe('/docs')
    expect(byUser.toUser('alice', '/bob/x')).toBeUndefined()
    expect(byUser.toUser('alice', '/alicex/y')).toBeUndefined()
    expect(byUser.toUser('alice', '/')).toBeUndefined()
  })

  it('supports deeper templates and normalises slashes', () => {
    const mount = createPathMap('/mounts//{user}/files/')
    expect(mount.rootOf('bob')).toBe('/mounts/bob/files')
    expect(mount.toGateway('bob', '/a')).toBe('/mounts/bob/files/a')
    expect(mount.toUser('bob', '/mounts/bob/files/a')).toBe('/a')
    expect(mount.toUser('bob', '/mounts/alice/files/a')).toBeUndefined()
  })

  it('supports a shared root', () => {
    const shared = createPathMap('/')
    expect(shared.toGateway('bob', '/a')).toBe('/a')
    expect(shared.toGateway('bob', '/')).toBe('/')
    expect(shared.toUser('bob', '/a/')).toBe('/a')
  })

  it('refuses templates that could climb out', () => {
    expect(() => createPathMap('/data/../{user}')).toThrow()
    expect(() => createPathMap('{user}')).toThrow()
  })
})
