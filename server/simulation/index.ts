// The simulated network as the composition (server/compose) runs it: the chain (with its providers'
// directory), its state file, the chain and providers on loopback, and the simulated Onchain Cloud.
// Nothing else in server/ imports the simulation; a real deployment never loads it.
export { createSimnet, type Simnet, type SimnetOptions } from './simnet/index.ts'
export { openSimChainStore } from './simnet/chain-store.ts'
export { startSimulatedNetwork } from './simnet/on-loopback.ts'
export { startSimulatedFoc, type SimulatedFoc } from './simfoc/index.ts'
