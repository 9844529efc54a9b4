import type { FocContext } from './context.ts'
import type { FocFunding } from './types.ts'

/** Whether the payer can pay for `dataSize` more bytes, by the SDK's cost model (storage.prepare). */
export async function funding({ synapse }: Pick<FocContext, 'synapse'>, dataSize: number): Promise<FocFunding> {
  const { costs } = await synapse.storage.prepare({ dataSize: BigInt(dataSize) })
  return {
    ready: costs.ready,
    depositNeeded: costs.depositNeeded,
    needsApproval: costs.needsFwssMaxApproval,
    ratePerEpoch: costs.rate.perEpoch,
  }
}
