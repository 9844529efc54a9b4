import { describe, expect, it } from 'vitest'
import { resolve } from 'node:path'
import { loadConfig, ConfigError } from '../../server/shared/config.ts'

describe('loadConfig', () => {
  it('runs on defaults with an empty environment', () => {
    const config = loadConfig({})
    expect(config.bridge.port).toBe(8080)
    expect(config.gateway.port).toBe(9011)
    expect(config.bridge.host).toBe('127.0.0.1')
    expect(config.dataDir).toBe(resolve('./data'))
    expect(config.gateway.dataDir).toBe(resolve('./data/gateway'))
    expect(config.bridge.network).toBe('simnet')
    expect(config.bridge.pathMap).toBe('/{user}')
    expect(config.bridge.gatewayUrl).toBeUndefined()
  })

  it('reads numbers, urls and enums from strings and treats empty values as unset', () => {
    const config = loadConfig({
      PORT: '18080', GATEWAY_PORT: '', GATEWAY_URL: 'http://gw.example:9011/', NETWORK: 'calibration', GROUP_SIZE: '1048576',
    })
    expect(config.bridge.port).toBe(18080)
    expect(config.gateway.port).toBe(9011)
    expect(config.bridge.gatewayUrl).toBe('http://gw.example:9011')
    expect(config.bridge.network).toBe('calibration')
    expect(config.gateway.groupSize).toBe(1048576)
  })

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['NETWORK', 'moon'],
    ['GATEWAY_URL', 'ftp://x'],
    ['GROUP_SIZE', '-1'],
    ['ADMIN_PASSWORD', 'short'],
    ['PATH_MAP', 'no-leading-slash'],
  ])('refuses %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError)
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name))
  })
})
