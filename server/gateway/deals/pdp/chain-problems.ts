import { isNetworkError } from '../../../network/errors.ts'
import { FocDeploymentError } from '../../../network/foc/client.ts'
import { createProblemNote } from '../note.ts'
import type { RouteContext } from '../types.ts'

/**
 * What the Onchain Cloud itself answered the route's last pass with, when it
 * was no copy's doing: a contract that refused a call (a revert: its error
 * by name), the warm storage service migrated to contracts this client
 * cannot use, or the chain's node not answering. Each is said in the log
 * once, when it starts or turns into another, and is the groups' reason
 * until a whole pass goes through.
 */
/** A problem of the Onchain Cloud's own, with the group reason code it gives. */
export interface ChainProblem {
  code: 'CONTRACT_REFUSED' | 'CHAIN_UNREACHABLE'
  words: string
}

export interface ChainProblems {
  /** Runs one step of a pass; such a failure becomes the problem (the step ends there), any other is thrown. */
  step(work: () => Promise<void>): Promise<void>
  /** A pass begins (before its first step) and ends (after its last): one with no such failure clears the problem. */
  begin(): void
  end(): void
  problem(): ChainProblem | undefined
}

export function createChainProblems(o: Pick<RouteContext, 'logger'>): ChainProblems {
  const note = createProblemNote(o.logger, {
    level: 'error',
    fields: { route: 'pdp' },
    prefix: 'PDP copies wait: ',
    cleared: 'the Onchain Cloud answers the gateway again',
  })
  let failed = false
  return {
    begin() {
      failed = false
    },
    end() {
      if (!failed) note.set(undefined)
    },
    problem: () => note.current as ChainProblem | undefined,
    async step(work) {
      try {
        await work()
      } catch (err) {
        const problem = problemOf(err)
        if (!problem) throw err
        failed = true
        note.set(problem)
      }
    },
  }
}

/** The route's problem a failure is, or undefined when it is not the Onchain Cloud's (a bug, a disk, a provider). */
function problemOf(err: unknown): ChainProblem | undefined {
  if (err instanceof FocDeploymentError)
    return { code: 'CONTRACT_REFUSED', words: `the Onchain Cloud's contracts cannot be used: ${err.message}` }
  if (isNetworkError(err, 'REJECTED_BY_CHAIN') && err.revert)
    return { code: 'CONTRACT_REFUSED', words: `the Onchain Cloud refused the gateway: ${err.message}` }
  if (isNetworkError(err, 'UNREACHABLE', 'TIMED_OUT', 'BUSY') && err.chainNode)
    return { code: 'CHAIN_UNREACHABLE', words: `waiting for the Onchain Cloud's chain: ${err.message}` }
  return undefined
}
