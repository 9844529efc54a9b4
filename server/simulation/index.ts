// The simulated network as the composition (server/compose) runs it: the chain (with its providers'
// directory), its state file, the chain and providers on loopback, and the simulated Onchain Cloud.
// Nothing else in server/ imports it, and it imports nothing of the adapters it stands in for
// (test/shared/import-graph.test.ts).
export { createSimnet, type Simnet, type SimnetOptions } from './simnet/index.ts'
export { openSimChainStore } from './simnet/chain-store.ts'
export { startSimulatedNetwork } from './simnet/on-loopback.ts'
export { startSimulatedFoc, type SimulatedFoc } from './simfoc/index.ts'
export { ProvingScheduleMismatch } from './simfoc/proving.ts'
export { SimfocChainMismatch } from './simfoc/chain-profiles.ts'
