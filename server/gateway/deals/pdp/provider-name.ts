/** A PDP copy's provider as the deal store names it: `pdp:<registry id>`, apart from the deal market's miner addresses. */
export const providerName = (providerId: number) => `pdp:${providerId}`
export const providerIdOf = (provider: string) => Number(provider.slice('pdp:'.length))
