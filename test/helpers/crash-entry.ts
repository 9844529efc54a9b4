import { fileURLToPath } from 'node:url'
import { start } from '../../server/main.ts'
import { FAULT_POINTS, type FaultPoint } from '../../server/shared/faults.ts'
import { stopAt } from './faults.ts'

/**
 * `npm start`'s process for crash tests: the same stack, with the gateway
 * stopping for good at the fault point CRASH_TEST_STOP_AT names (a variable
 * of this test entry only; the product reads none). The supervisor starts
 * every part from this file too, so the gateway part gets the faults.
 */
const at = process.env.CRASH_TEST_STOP_AT
if (at !== undefined && !FAULT_POINTS.includes(at as FaultPoint))
  throw new Error(`CRASH_TEST_STOP_AT must be one of ${FAULT_POINTS.join(', ')}`)
start({ entry: fileURLToPath(import.meta.url), faults: at ? stopAt(at as FaultPoint) : undefined })
