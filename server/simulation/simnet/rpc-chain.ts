import type { RpcContext, RpcMethods } from './rpc-context.ts'

/** Where no upgrade is scheduled, as mainnet's build says for one not yet planned (lotus build/buildconstants/params_mainnet.go). */
const NOT_SCHEDULED = 9_999_999_999

/** Lotus's api/types.go ForkUpgradeParams: every upgrade before the simulated genesis happened "before genesis" (-1). */
const PAST_UPGRADES = [
  'Smoke',
  'Breeze',
  'Ignition',
  'Liftoff',
  'Assembly',
  'Refuel',
  'Tape',
  'Kumquat',
  'Calico',
  'Persian',
  'Orange',
  'Claus',
  'Trust',
  'Norwegian',
  'Turbo',
  'Hyperdrive',
  'Chocolate',
  'OhSnap',
  'Skyr',
  'Shark',
  'Hygge',
  'Lightning',
  'Thunder',
  'Watermelon',
  'Dragon',
  'Phoenix',
  'Waffle',
  'Tuktuk',
  'Teep',
  'Tock',
  'GoldenWeek',
]

/** The chain itself: its head, its parameters and its network version, from which a client keeps its clock and rules. */
export function chainMethods({ simnet, tipsetKey, epochOf }: RpcContext): RpcMethods {
  return {
    async 'Filecoin.ChainHead'() {
      const head = await simnet.chainHead()
      return {
        Cids: tipsetKey(head.epoch),
        Blocks: [{ Miner: 'f01000', Height: head.epoch, Timestamp: head.timestamp, ParentBaseFee: '100' }],
        Height: head.epoch,
      }
    },
    // Lotus api/types.go NetworkParams, as node/impl/full/state.go fills it.
    async 'Filecoin.StateGetNetworkParams'() {
      const past = simnet.networkVersionAt(0) >= 29
      return {
        // A sped-up chain's block time, so that a clock read from the node (node-clock.ts) keeps its pace.
        NetworkName: 'simnet',
        BlockDelaySecs: simnet.clock.epochSeconds,
        ConsensusMinerMinPower: '0',
        PreCommitChallengeDelay: 150,
        ForkUpgradeParams: {
          ...Object.fromEntries(PAST_UPGRADES.map((name) => [`Upgrade${name}Height`, -1])),
          BreezeGasTampingDuration: 0,
          UpgradeFireHorseHeight: simnet.networkVersionAt(0) >= 28 ? -1 : NOT_SCHEDULED,
          // nv29 (FIP-0118) has no name yet in Lotus: UpgradeXxHeight.
          UpgradeXxHeight: past ? -1 : (simnet.nv29Epoch ?? NOT_SCHEDULED),
        },
        Eip155ChainID: 31415926,
        GenesisTimestamp: simnet.clock.genesis,
      }
    },
    async 'Filecoin.StateNetworkVersion'([tsk]) {
      return simnet.networkVersionAt(epochOf(tsk))
    },
  }
}
