import { startDealStack as startStackOn, type DealStack, type DealStackOptions } from '../../../scripts/lib/deal-stack.ts'
import { testDatabaseUrl } from '../../helpers/stores.ts'

export type { DealStack, DealStackOptions } from '../../../scripts/lib/deal-stack.ts'

/** The deal test stack (scripts/lib/deal-stack.ts), its gateway on the store the tests run on (TEST_STORE, test/helpers/stores.ts). */
export async function startDealStack(o: DealStackOptions = {}): Promise<DealStack> {
  return startStackOn({ ...o, databaseUrl: o.databaseUrl ?? (await testDatabaseUrl('gateway')) })
}
