/** Every URL this process fetched while `run` ran (global fetch: the Synapse SDK's JSON-RPC and HTTP calls alike). */
export async function recordingFetches<T>(run: () => Promise<T>): Promise<{ result: T; urls: URL[] }> {
  const original = globalThis.fetch
  const urls: URL[] = []
  globalThis.fetch = (input, init) => {
    urls.push(new URL(input instanceof Request ? input.url : String(input)))
    return original(input, init)
  }
  try {
    return { result: await run(), urls }
  } finally {
    globalThis.fetch = original
  }
}
