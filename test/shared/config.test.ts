import { describe, expect, it } from 'vitest'
import { resolve } from 'node:path'
import { ConfigError, DEAL_DEFAULTS, loadConfig, parseRole } from '../../server/shared/config.ts'
import { PDP_MAX_UPLOAD_BYTES } from '../../server/shared/piece.ts'

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
      PORT: '18080',
      GATEWAY_PORT: '',
      GATEWAY_URL: 'http://gw.example:9011/',
      NETWORK: 'calibration',
      GROUP_SIZE: '1048576',
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
    ['SIMFOC_PROVING', 'weekly'],
    ['SIMFOC_CHAIN', 'sepolia'],
  ])('refuses %s=%s naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError)
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(name))
  })

  it('sizes groups for the network: small and quick on the simulated one, big enough for real providers on a real one', () => {
    const simnet = loadConfig({})
    expect(simnet.gateway).toMatchObject({ groupSize: 64 * 2 ** 20, groupIdleSeconds: 20 })
    expect(simnet.gateway.deals!.maxPaddingFactor).toBe(Infinity)
    const mainnet = loadConfig({ NETWORK: 'mainnet', PDP_COPIES: '0', DEAL_MAX_PRICE_PER_TIB_MONTH: '0.5' })
    // Real providers commonly take pieces of 256 MiB to 32 GiB; a group waits a day for more data.
    expect(mainnet.gateway).toMatchObject({ groupSize: 8 * 2 ** 30, groupIdleSeconds: 86_400 })
    expect(mainnet.gateway.deals!.maxPaddingFactor).toBe(16)
    expect(loadConfig({ NETWORK: 'calibration' }).gateway.groupSize).toBe(2 ** 30)
    expect(
      loadConfig({ NETWORK: 'mainnet', GROUP_SIZE: '1048576', GROUP_IDLE_SECONDS: '30', DEAL_MAX_PADDING: '0' }).gateway,
    ).toMatchObject({ groupSize: 2 ** 20, groupIdleSeconds: 30, deals: { maxPaddingFactor: Infinity } })
  })

  it('lets a group of folder listings alone wait a day for a file, on every network, unless LISTING_WAIT_SECONDS says otherwise', () => {
    expect(loadConfig({}).gateway.listingWaitSeconds).toBe(86_400)
    expect(loadConfig({ NETWORK: 'calibration' }).gateway.listingWaitSeconds).toBe(86_400)
    expect(loadConfig({ LISTING_WAIT_SECONDS: '60' }).gateway.listingWaitSeconds).toBe(60)
    expect(() => loadConfig({ LISTING_WAIT_SECONDS: '0' })).toThrow(/LISTING_WAIT_SECONDS/)
  })
})

describe('groups and the Onchain Cloud: every group fits every route it is sent to', () => {
  const FOC = 'https://api.node.glif.io/rpc/v1'
  /** The most CAR bytes a group of `groupSize` writes: it closes while its CAR fits 127/128 of it (group-filling.ts). */
  const carCapacity = (groupSize: number) => Math.floor((groupSize * 127) / 128)

  it("gives mainnet's defaults (PDP copies on) groups whose CAR fits one upload of the Synapse SDK", () => {
    for (const env of [{ NETWORK: 'mainnet', FOC_RPC_URL: FOC }, { NETWORK: 'mainnet' }, { NETWORK: 'calibration', FOC_RPC_URL: FOC }]) {
      const { gateway } = loadConfig(env)
      expect(gateway.pdp!.copies).toBe(2)
      expect(gateway.groupSize).toBe(2 ** 30)
      expect(carCapacity(gateway.groupSize)).toBeLessThanOrEqual(PDP_MAX_UPLOAD_BYTES)
    }
    // Without PDP copies, the deal market's own size: 8 GiB on mainnet.
    expect(loadConfig({ NETWORK: 'mainnet', FOC_RPC_URL: FOC, PDP_COPIES: '0', DEAL_COPIES: '2' }).gateway.groupSize).toBe(8 * 2 ** 30)
    expect(loadConfig({ NETWORK: 'mainnet', SIMFOC_PROVIDERS: '0', DEAL_MAX_PRICE_PER_TIB_MONTH: '3USD' }).gateway.groupSize).toBe(
      8 * 2 ** 30,
    )
    // Smaller networks keep theirs.
    expect(loadConfig({}).gateway.groupSize).toBe(64 * 2 ** 20)
  })

  it('refuses a GROUP_SIZE whose CAR could not be uploaded as one PDP copy, saying the limit and the way out', () => {
    const refused =
      /GROUP_SIZE: 8589934592 is too large for PDP copies: each is one Onchain Cloud upload of the group's CAR, at most 1065353216 bytes \(the Synapse SDK's limit\), so GROUP_SIZE may be at most 1073741824 \(1 GiB\) while PDP_COPIES is above 0; set a smaller GROUP_SIZE, or PDP_COPIES=0/
    expect(() => loadConfig({ NETWORK: 'mainnet', FOC_RPC_URL: FOC, GROUP_SIZE: String(8 * 2 ** 30) })).toThrow(ConfigError)
    expect(() => loadConfig({ NETWORK: 'mainnet', FOC_RPC_URL: FOC, GROUP_SIZE: String(8 * 2 ** 30) })).toThrow(refused)
    // The simulated Onchain Cloud takes no more than the real one: the SDK is the same.
    expect(() => loadConfig({ GROUP_SIZE: String(2 ** 30 + 1) })).toThrow(/GROUP_SIZE: 1073741825 is too large for PDP copies/)
    expect(loadConfig({ NETWORK: 'mainnet', FOC_RPC_URL: FOC, GROUP_SIZE: String(2 ** 30) }).gateway.groupSize).toBe(2 ** 30)
    // No PDP copies, no such limit.
    for (const env of [{ PDP_COPIES: '0' }, { SIMFOC_PROVIDERS: '0' }]) {
      expect(loadConfig({ NETWORK: 'mainnet', DEAL_COPIES: '1', GROUP_SIZE: String(32 * 2 ** 30), ...env }).gateway.groupSize).toBe(
        32 * 2 ** 30,
      )
    }
  })
})

describe('what the configuration derives', () => {
  it('decides the chain once: the simulated one by default, a replica with SIMNET_RPC_URL, a node with LOTUS_URL', () => {
    expect(loadConfig({}).chain).toEqual({
      service: 'simnet',
      gatewayRpc: undefined,
      makesWalletKey: true,
      publicUrlRequired: true,
      addressNetwork: 'mainnet',
    })
    const replica = loadConfig({ SIMNET_RPC_URL: 'http://127.0.0.1:1234/rpc/v1' }).chain
    expect(replica).toMatchObject({
      service: 'simnet-replica',
      gatewayRpc: { url: 'http://127.0.0.1:1234/rpc/v1', simulated: true },
      publicUrlRequired: false,
    })
    expect(replica.gatewayRpc!.token).toBeUndefined()
    // A real network's keys are the operator's: none is made, and providers must reach GATEWAY_PUBLIC_URL.
    const mainnet = loadConfig({ NETWORK: 'mainnet', LOTUS_URL: 'https://node.example/rpc/v1/', LOTUS_TOKEN: 't' }).chain
    expect(mainnet).toEqual({
      service: 'lotus',
      gatewayRpc: { url: 'https://node.example/rpc/v1', token: 't', simulated: false },
      makesWalletKey: false,
      publicUrlRequired: true,
      addressNetwork: 'mainnet',
    })
    const devnet = loadConfig({ NETWORK: 'devnet', LOTUS_URL: 'http://127.0.0.1:1234/rpc/v1' }).chain
    expect(devnet).toMatchObject({ service: 'lotus', makesWalletKey: true, publicUrlRequired: false, addressNetwork: 'testnet' })
  })

  it("gives the simulated Onchain Cloud calibration's proving schedule, or mainnet's with SIMFOC_PROVING=mainnet", () => {
    expect(loadConfig({}).service.simfocProving).toBe('calibration')
    expect(loadConfig({ SIMFOC_PROVING: 'mainnet' }).service.simfocProving).toBe('mainnet')
  })

  it('has the simulated Onchain Cloud stand as a devnet, or as calibration or mainnet with SIMFOC_CHAIN', () => {
    expect(loadConfig({}).service.simfocChain).toBe('devnet')
    expect(loadConfig({ SIMFOC_CHAIN: 'calibration' }).service.simfocChain).toBe('calibration')
    expect(loadConfig({ SIMFOC_CHAIN: 'mainnet' }).service.simfocChain).toBe('mainnet')
  })

  it("needs a devnet's Lotus node only for deals on the market: with DEAL_COPIES=0 its Onchain Cloud's FEVM chain is all", () => {
    const foc = { NETWORK: 'devnet', FOC_RPC_URL: 'http://127.0.0.1:1235/rpc/v1', FOC_CONTRACTS: 'devnet/contracts.json' }
    const alone = loadConfig({ ...foc, DEAL_COPIES: '0' })
    // No chain for deals, no deal service or simulated network under npm start; the throwaway key is still made.
    expect(alone.chain).toMatchObject({ gatewayRpc: undefined, makesWalletKey: true })
    expect(alone.stack.dealService).toBe(false)
    expect(alone.gateway.pdp!.copies).toBe(2)
    expect(() => loadConfig(foc)).toThrow(
      /LOTUS_URL: required when NETWORK=devnet and deals are made on the market .*set DEAL_COPIES=0 with FOC_RPC_URL and FOC_CONTRACTS/,
    )
    expect(() => loadConfig({ NETWORK: 'devnet', DEAL_COPIES: '0' })).toThrow(/FOC_RPC_URL: required when NETWORK=devnet has no LOTUS_URL/)
    // The deal service reads a devnet from its node; the app surface can date by the FEVM chain.
    expect(() => loadConfig({ ...foc, DEAL_COPIES: '0' }, { role: 'service' })).toThrow(/LOTUS_URL: required for --role service/)
    expect(loadConfig({ ...foc, GATEWAY_URL: 'http://127.0.0.1:9011' }, { role: 'app' }).bridge.network).toBe('devnet')
  })

  it('runs no deal service for the Onchain Cloud alone on a real one, and makes no key for it', () => {
    const calibration = { NETWORK: 'calibration', FOC_RPC_URL: 'https://api.calibration.node.glif.io/rpc/v1' }
    const alone = loadConfig({ ...calibration, DEAL_COPIES: '0' })
    expect(alone.stack.dealService).toBe(false)
    expect(alone.chain).toMatchObject({ gatewayRpc: undefined, makesWalletKey: false })
    // Mainnet's market is off by default without a ceiling: the same.
    expect(loadConfig({ NETWORK: 'mainnet', FOC_RPC_URL: 'https://api.node.glif.io/rpc/v1' }).stack.dealService).toBe(false)
    // With the market on, or on the simulated Onchain Cloud, the stack runs its deal service as before.
    expect(loadConfig(calibration).stack.dealService).toBe(true)
    expect(loadConfig({ DEAL_COPIES: '0' }).stack.dealService).toBe(true)
  })

  it("takes a devnet's Onchain Cloud with FOC_RPC_URL and FOC_CONTRACTS together, and refuses either half alone", () => {
    const devnet = { NETWORK: 'devnet', LOTUS_URL: 'http://127.0.0.1:1234/rpc/v1', FOC_RPC_URL: 'http://127.0.0.1:1235/rpc/v1' }
    expect(loadConfig({ ...devnet, FOC_CONTRACTS: 'devnet/contracts.json' }).onchainCloud).toMatchObject({
      rpcUrl: devnet.FOC_RPC_URL,
      contractsFile: resolve('devnet/contracts.json'),
    })
    expect(() => loadConfig(devnet)).toThrow(/FOC_CONTRACTS: required with FOC_RPC_URL when NETWORK=devnet/)
    expect(() => loadConfig({ NETWORK: 'devnet', LOTUS_URL: devnet.LOTUS_URL, FOC_CONTRACTS: 'c.json' })).toThrow(
      /FOC_CONTRACTS: a devnet's contracts need its FEVM JSON-RPC too: set FOC_RPC_URL/,
    )
    // Calibration's and mainnet's addresses are the published ones; the simulated network has its own Onchain Cloud.
    expect(() => loadConfig({ NETWORK: 'calibration', FOC_RPC_URL: devnet.FOC_RPC_URL, FOC_CONTRACTS: 'c.json' })).toThrow(
      /FOC_CONTRACTS: only for NETWORK=devnet \(it is calibration\)/,
    )
    expect(() => loadConfig({ FOC_RPC_URL: devnet.FOC_RPC_URL })).toThrow(/FOC_RPC_URL: a real Onchain Cloud needs a real chain/)
  })

  it("names the shared files under DATA_DIR and the stack's gateway account", () => {
    const config = loadConfig({ DATA_DIR: '/srv/gw' })
    expect(config.files).toEqual({
      gatewayPassword: '/srv/gw/gateway-password',
      simnetChain: '/srv/gw/simnet/chain.sqlite',
      simnetProviders: '/srv/gw/simnet/providers',
      simfoc: '/srv/gw/simfoc',
      serviceApiKey: '/srv/gw/service/api-key',
      adminPassword: '/srv/gw/app/admin-password',
    })
    expect(config.wallet).toEqual({ dir: '/srv/gw/wallet' })
    expect(loadConfig({ WALLET: 'f1abc' }).wallet.key).toBe('f1abc')
    // Without both halves of an account the stack makes its own (the password generated at the first start).
    expect(config.stack.gatewayAccount).toEqual({ user: 'bridge' })
    expect(loadConfig({ GATEWAY_USER: 'svc' }).stack.gatewayAccount).toEqual({ user: 'bridge' })
    expect(loadConfig({ GATEWAY_USER: 'svc', GATEWAY_PASSWORD: 'pw' }).stack.gatewayAccount).toEqual({ user: 'svc', password: 'pw' })
  })

  it('is frozen all the way down: nothing rewrites it after start', () => {
    const config = loadConfig({})
    expect(Object.isFrozen(config)).toBe(true)
    expect(Object.isFrozen(config.gateway.deals)).toBe(true)
    expect(() => {
      ;(config.bridge as { gatewayUser?: string }).gatewayUser = 'bridge'
    }).toThrow(TypeError)
  })

  it("takes the deal terms' defaults from DEAL_DEFAULTS, the ones a gateway without terms uses", () => {
    const { deals } = loadConfig({}).gateway
    expect(deals).toMatchObject({ ...DEAL_DEFAULTS, verified: true })
    expect(deals!.copies).toBeUndefined()
  })

  it('takes DEAL_COPIES=0 (Onchain Cloud only) only where PDP copies are made instead, never offloading groups with no copy', () => {
    expect(loadConfig({ DEAL_COPIES: '0' }).gateway.deals!.copies).toBe(0)
    expect(
      loadConfig({
        NETWORK: 'calibration',
        DEAL_COPIES: '0',
        FOC_RPC_URL: 'https://api.calibration.node.glif.io/rpc/v1',
        SIMFOC_PROVIDERS: '0',
      }).gateway.pdp!.copies,
    ).toBe(2)
    for (const env of [
      { DEAL_COPIES: '0', PDP_COPIES: '0' },
      { DEAL_COPIES: '0', SIMFOC_PROVIDERS: '0' },
    ]) {
      expect(() => loadConfig(env)).toThrow(/DEAL_COPIES: 0 \(no deal-market copies\) needs PDP copies/)
    }
  })

  it('keeps the deal market off on mainnet until a price ceiling is set, so that no paid deal is proposed unasked', () => {
    const FOC = 'https://api.node.glif.io/rpc/v1'
    // PDP copies store the groups: the market is off, and the log says why and how to turn it on.
    const off = loadConfig({ NETWORK: 'mainnet', FOC_RPC_URL: FOC }).gateway.deals!
    expect(off.copies).toBe(0)
    expect(off.marketOff).toMatch(/every deal is paid since Fil\+ ended.*set DEAL_MAX_PRICE_PER_TIB_MONTH/)
    // No other route: refused at start, naming every way out, rather than taking files it could never offload.
    for (const env of [{ PDP_COPIES: '0' }, { SIMFOC_PROVIDERS: '0' }]) {
      expect(() => loadConfig({ NETWORK: 'mainnet', ...env })).toThrow(
        /DEAL_MAX_PRICE_PER_TIB_MONTH: required on mainnet unless PDP copies.*FOC_RPC_URL.*DEAL_COPIES/,
      )
      // Only the gateway proposes deals: the deal service alone starts.
      expect(loadConfig({ NETWORK: 'mainnet', ...env }, { role: 'service' }).service.network).toBe('mainnet')
    }
    // A ceiling turns it on, in FIL or in USD; DEAL_COPIES set by hand is a choice too.
    const fil = loadConfig({ NETWORK: 'mainnet', FOC_RPC_URL: FOC, DEAL_MAX_PRICE_PER_TIB_MONTH: '0.5FIL' }).gateway.deals!
    expect(fil).toMatchObject({ maxPrice: { amount: '0.5', currency: 'FIL' } })
    expect(fil.copies).toBeUndefined()
    expect(fil.marketOff).toBeUndefined()
    expect(loadConfig({ NETWORK: 'mainnet', PDP_COPIES: '0', DEAL_MAX_PRICE_PER_TIB_MONTH: '3 usd' }).gateway.deals!.maxPrice).toEqual({
      amount: '3',
      currency: 'USD',
    })
    expect(loadConfig({ NETWORK: 'mainnet', PDP_COPIES: '0', DEAL_COPIES: '2' }).gateway.deals!.copies).toBe(2)
    // Calibration and the simulated network keep the market on, as before.
    expect(loadConfig({}).gateway.deals!.copies).toBeUndefined()
    expect(
      loadConfig({ NETWORK: 'calibration', FOC_RPC_URL: 'https://api.calibration.node.glif.io/rpc/v1' }).gateway.deals!.copies,
    ).toBeUndefined()
    expect(loadConfig({ DEAL_MAX_PRICE_PER_TIB_MONTH: '0.5' }).gateway.deals!.maxPrice).toEqual({ amount: '0.5', currency: 'FIL' })
  })

  it.each(['cheap', '0.5EUR', '-1', '1e3'])('refuses DEAL_MAX_PRICE_PER_TIB_MONTH=%s with the forms it takes', (value) => {
    expect(() => loadConfig({ DEAL_MAX_PRICE_PER_TIB_MONTH: value })).toThrow(
      /DEAL_MAX_PRICE_PER_TIB_MONTH: a price per TiB-month in FIL or USD, e.g. 0.5, 0.5FIL or 3USD/,
    )
  })

  it('checks --role: a known one, and GATEWAY_URL for the app surface alone', () => {
    expect(parseRole(undefined)).toBe('all')
    expect(parseRole('gateway')).toBe('gateway')
    expect(() => parseRole('moon')).toThrow(/Unknown --role "moon" \(all, app, gateway, service, network\)/)
    expect(() => loadConfig({}, { role: 'app' })).toThrow(/--role app needs GATEWAY_URL/)
    // The simulated network alone runs only where no other chain is named.
    expect(parseRole('network')).toBe('network')
    expect(() => loadConfig({ SIMNET_RPC_URL: 'http://127.0.0.1:1234/rpc/v1' }, { role: 'network' })).toThrow(/--role network/)
    expect(loadConfig({ GATEWAY_URL: 'http://127.0.0.1:9011' }, { role: 'app' }).bridge.gatewayUrl).toBe('http://127.0.0.1:9011')
  })
})
