import { multiaddr } from '@multiformats/multiaddr'
import { addressParam, LOTUS_ERROR, RpcError, type RpcContext, type RpcMethods } from './rpc-context.ts'

/** Lotus's JSON-RPC code for its ErrActorNotFound. */
const ACTOR_NOT_FOUND = 11

/** The actors behind addresses: their ids, the storage providers' miner info, and verified clients' DataCap. */
export function actorMethods({ simnet }: RpcContext): RpcMethods {
  return {
    async 'Filecoin.StateLookupID'([a]) {
      const id = await simnet.lookupId(addressParam(a))
      // lotus node/impl/full/state.go StateLookupID: an address with no actor is answered with the registered
      // ErrActorNotFound, code 11 (api/api_errors.go: jsonrpc.FirstUserCode 2 + 9), and its bare words.
      if (!id) throw new RpcError(ACTOR_NOT_FOUND, 'actor not found')
      return id
    },
    async 'Filecoin.StateVerifiedClientStatus'([a]) {
      const cap = await simnet.dataCap(addressParam(a))
      return cap === null ? null : cap.toString()
    },
    async 'Filecoin.StateMinerInfo'([a]) {
      const info = await simnet.minerInfo(addressParam(a))
      if (!info) throw new RpcError(LOTUS_ERROR, `failed to load miner actor: actor not found (${a})`)
      return {
        Owner: info.owner,
        Worker: info.worker,
        NewWorker: '<empty>',
        ControlAddresses: [],
        WorkerChangeEpoch: -1,
        PeerId: info.peerId,
        Multiaddrs: info.multiaddrs.length > 0 ? info.multiaddrs.map((m) => Buffer.from(multiaddr(m).bytes).toString('base64')) : null,
        WindowPoStProofType: 8,
        SectorSize: info.sectorSize,
        WindowPoStPartitionSectors: 2349,
        ConsensusFaultElapsed: -1,
        Beneficiary: info.owner,
      }
    },
    async 'Filecoin.StateListMiners'() {
      return simnet.listProviders()
    },
  }
}
