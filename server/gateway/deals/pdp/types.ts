import type { FocClient } from '../../../network/foc/client.ts'
import type { ChainClock } from '../../../shared/epochs.ts'

/** Where one group's upload stands, for its `reason`. */
export interface PdpUpload {
  copies: number
  bytes: number
  total: number
  /** Copies whose piece is being added on chain. */
  adding: number
}

/**
 * How long the Onchain Cloud account pays for what is stored (filecoin-pin's
 * wording): HEALTHY, WARNING with 14 days or less left, DEFICIT when the
 * funds no longer cover the lockup.
 */
export interface PdpFunding {
  status: 'HEALTHY' | 'WARNING' | 'DEFICIT'
  /** USDFC deposited in Filecoin Pay (18 decimals). */
  funds: bigint
  /** Chain epochs the funds still pay for at the current rate. */
  runwayEpochs: number
  /** When that is, in wall-clock milliseconds (a sped-up simulated network's epochs are shorter). */
  fundedUntilMs: number
  /** How many days of the network's own time that is (server/shared/funded-until.ts): more than the wall clock's on a sped-up network. */
  fundedDays?: number
}

/** The pace of the chain the copies are proved on, for the parts that wait in its epochs: its clock's. */
export interface ChainPace {
  /** Wall-clock seconds per epoch (a sped-up simulated chain's are shorter). */
  epochSeconds: number
}

/** The PDP route's client and policy. */
export interface PdpRouteOptions {
  client: FocClient
  /** Copies per group on PDP providers. */
  copies: number
  /**
   * Top Filecoin Pay up from the wallet's own USDFC when an upload needs it
   * (the simulated network's faucet money); otherwise an operator deposits
   * and nothing is uploaded until then.
   */
  autoDeposit: boolean
  /**
   * The largest CAR one upload takes (the SDK's PDP_MAX_UPLOAD_BYTES): the content store seals none larger
   * while PDP copies are made; a group sealed larger before (a bigger GROUP_SIZE then) is not sent.
   */
  maxUploadBytes: number
  /** Longest an upload may go without progress (bytes taken by the first provider, a copy made, a step on chain). */
  uploadIdleMs: number
  /** Groups uploaded at once, once the account has its data sets. */
  maxUploads: number
  /**
   * The clock of the FEVM chain the copies are proved on, as the client read it (`client.chainClock()`): its
   * epochs' wall-clock seconds (a sped-up simulated one's are shorter) and when its epoch 0 was. Every wait
   * and date of the route is on it, never on the deal market's chain.
   */
  clock: ChainClock
  /** Chain time (30 s epochs) between reads of one copy's proofs, and of the account. */
  pollMs: number
}
