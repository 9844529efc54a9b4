/** Prints the OpenAPI description of one part, generated from its zod schemas. */
import { parseArgs } from 'node:util'
import { bridgeOpenApi } from '../server/bridge/openapi.ts'
import { gatewayOpenApi } from '../server/gateway/openapi.ts'
import { serviceOpenApi } from '../server/service/openapi.ts'
import { VERSION } from '../server/shared/version.ts'

const HELP = `Usage: npm run openapi -- --part app|gateway|service

Prints the part's OpenAPI 3 description (JSON) on stdout. The running app
surface also serves its own at /ocs/v2.php/apps/gateway/openapi.json and the
deal service at /openapi.json.
`
const { values } = parseArgs({ options: { part: { type: 'string' }, help: { type: 'boolean', short: 'h' } } })
const parts: Record<string, () => Record<string, unknown>> = {
  app: () => bridgeOpenApi(VERSION),
  gateway: () => gatewayOpenApi(VERSION),
  service: () => serviceOpenApi(),
}
if (values.help || !values.part || !parts[values.part]) {
  process.stdout.write(HELP)
  process.exit(values.help ? 0 : 2)
}
process.stdout.write(JSON.stringify(parts[values.part](), null, 2) + '\n')
