import { describe, expect, it } from 'vitest'
import { resolve } from 'node:path'
import { loadConfig, ConfigError } from '../../server/shared/config.ts'

describe('loadConfig', () => {
  it('turns simulated network faults on with SIMNET_FAULT_RATE, off by default, at most 0.2', () => {
    expect(loadConfig({}).service.simnetFaultRate).toBe(0)
    expect(loadConfig({ SIMNET_FAULT_RATE: '0.03' }).service.simnetFaultRate).toBe(0.03)
    expect(() => loadConfig({ SIMNET_FAULT_RATE: '0.5' })).toThrow(/SIMNET_FAULT_RATE/)
    expect(() => loadConfig({ SIMNET_FAULT_RATE: '-0.1' })).toThrow(ConfigError)
  })

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
    // The chain client speaks JSON-RPC over HTTP POST; Lotus serves that at the same /rpc/v1 as its WebSocket.
    ['LOTUS_URL', 'ws://127.0.0.1:1234/rpc/v1'],
    ['LOTUS_URL', 'wss://node.example/rpc/v1'],
    ['DEAL_MAX_PADDING', '-2'],
  ])('refuses %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError)
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name))
  })

  it('sizes groups for the network: small and quick on the simulated one, big enough for real providers on a real one', () => {
    const simnet = loadConfig({})
    expect(simnet.gateway).toMatchObject({ groupSize: 64 * 2 ** 20, groupIdleSeconds: 20 })
    expect(simnet.gateway.deals!.maxPaddingFactor).toBe(Infinity)
    const mainnet = loadConfig({ NETWORK: 'mainnet' })
    // Real providers commonly take pieces of 256 MiB to 32 GiB; a group waits a day for more data.
    expect(mainnet.gateway).toMatchObject({ groupSize: 8 * 2 ** 30, groupIdleSeconds: 86_400 })
    expect(mainnet.gateway.deals!.maxPaddingFactor).toBe(16)
    expect(loadConfig({ NETWORK: 'calibration' }).gateway.groupSize).toBe(2 ** 30)
    expect(loadConfig({ NETWORK: 'mainnet', GROUP_SIZE: '1048576', GROUP_IDLE_SECONDS: '30', DEAL_MAX_PADDING: '0' }).gateway).toMatchObject({ groupSize: 2 ** 20, groupIdleSeconds: 30, deals: { maxPaddingFactor: Infinity } })
  })
})
