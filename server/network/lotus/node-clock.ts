import { protocolError } from '../errors.ts'
import type { NetworkClock } from '../../shared/epochs.ts'
import type { JsonRpcCall } from './json-rpc.ts'

/**
 * A devnet's clock as its node tells it: the block time from
 * `Filecoin.StateGetNetworkParams` (BlockDelaySecs, lotus api/types.go
 * NetworkParams) and the genesis from `Filecoin.ChainHead` (its first block's
 * Timestamp less Height block times). A devnet is started whenever someone
 * starts it, with whatever block time its build has (Lotus's 2k build: 4 s),
 * so no constant of ours can know either.
 */
export async function nodeClock(call: JsonRpcCall): Promise<NetworkClock> {
  const [params, head] = await Promise.all([
    call<{ BlockDelaySecs?: unknown }>('Filecoin.StateGetNetworkParams', []),
    call<{ Height?: unknown; Blocks?: { Timestamp?: unknown }[] }>('Filecoin.ChainHead', []),
  ])
  const epochSeconds = params?.BlockDelaySecs
  const height = head?.Height
  const timestamp = head?.Blocks?.[0]?.Timestamp
  if (typeof epochSeconds !== 'number' || !(epochSeconds > 0))
    throw protocolError('the node sent no usable BlockDelaySecs in StateGetNetworkParams')
  if (
    typeof height !== 'number' ||
    !Number.isSafeInteger(height) ||
    height < 0 ||
    typeof timestamp !== 'number' ||
    !Number.isFinite(timestamp)
  ) {
    throw protocolError('the node sent no usable Height and block Timestamp in ChainHead')
  }
  return { name: 'devnet', genesis: timestamp - height * epochSeconds, epochSeconds }
}
