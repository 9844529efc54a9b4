/**
 * Compiles the simulated Onchain Cloud's stand-in contracts (every `*.sol` in
 * this folder) with the `solc` npm package, 0.8.30 as the real FOC contracts
 * use, and caches the result under node_modules/.cache/simfoc/ keyed by the
 * sha256 of the sources and the settings.
 */
import { existsSync } from 'node:fs'
import { createHash, randomBytes } from 'node:crypto'
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { Abi, Hex } from 'viem'

export interface FocArtifact {
  abi: Abi
  bytecode: Hex
}

/** Deployable contracts by name (interfaces and abstract contracts are left out). */
export type FocArtifacts = Record<string, FocArtifact>

export const CONTRACTS_DIR = fileURLToPath(new URL('.', import.meta.url))
export const CACHE_DIR = fileURLToPath(new URL('../../../../node_modules/.cache/simfoc/', import.meta.url))

/** The compiler the real contracts are built with (FilOzone/filecoin-services foundry.toml: solc 0.8.30). */
export const SOLC_VERSION = '0.8.30'

/** No viaIR: the contracts keep their functions small instead. */
export const SOLC_SETTINGS = {
  evmVersion: 'cancun',
  optimizer: { enabled: true, runs: 200 },
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object'] } },
} as const

interface SolcError {
  severity: 'error' | 'warning' | 'info'
  formattedMessage: string
}

interface SolcOutput {
  errors?: SolcError[]
  contracts?: Record<string, Record<string, { abi: Abi; evm: { bytecode: { object: string } } }>>
}

export class ContractCompileError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'ContractCompileError'
  }
}

/** The `.sol` files of the contracts folder, by file name, in a stable order. */
export async function readFocSources(dir = CONTRACTS_DIR): Promise<Record<string, string>> {
  const names = (await readdir(dir)).filter((name) => name.endsWith('.sol')).sort()
  const sources: Record<string, string> = {}
  for (const name of names) sources[name] = await readFile(join(dir, name), 'utf8')
  return sources
}

/** The cache key: sha256 over the compiler version, the settings and every source with its name. */
export function sourcesKey(sources: Record<string, string>): string {
  const hash = createHash('sha256')
  hash.update(JSON.stringify({ solc: SOLC_VERSION, settings: SOLC_SETTINGS }))
  for (const name of Object.keys(sources).sort()) {
    hash.update(`\0${name}\0`)
    hash.update(sources[name])
  }
  return hash.digest('hex')
}

/** Runs solc on the sources; throws ContractCompileError with every error solc reported. */
export function compileSources(sources: Record<string, string>): FocArtifacts {
  const require = createRequire(import.meta.url)
  const solc = require('solc') as { version(): string; compile(input: string): string }
  if (!solc.version().startsWith(SOLC_VERSION)) {
    throw new ContractCompileError(`solc ${SOLC_VERSION} is needed, ${solc.version()} is installed`)
  }
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(Object.entries(sources).map(([name, content]) => [name, { content }])),
    settings: SOLC_SETTINGS,
  }
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error')
  if (errors.length > 0) {
    throw new ContractCompileError(errors.map((e) => e.formattedMessage).join('\n'))
  }
  const artifacts: FocArtifacts = {}
  const origin: Record<string, string> = {}
  for (const [file, contracts] of Object.entries(output.contracts ?? {})) {
    for (const [name, contract] of Object.entries(contracts)) {
      const code = contract.evm.bytecode.object
      if (code.length === 0) continue
      if (artifacts[name] !== undefined) {
        throw new ContractCompileError(`contract ${name} is defined in both ${origin[name]} and ${file}`)
      }
      artifacts[name] = { abi: contract.abi, bytecode: `0x${code}` }
      origin[name] = file
    }
  }
  return artifacts
}

/** Whether the cache holds the contracts as their sources are now. */
export async function isCompiled(options: { dir?: string; cacheDir?: string } = {}): Promise<boolean> {
  const key = sourcesKey(await readFocSources(options.dir))
  return existsSync(join(options.cacheDir ?? CACHE_DIR, `${key}.json`))
}

/** The last load in this process, so that every test of a file compiles or reads the cache once. */
let memo: { key: string; cacheDir: string; artifacts: Promise<FocArtifacts> } | undefined

/**
 * The compiled contracts: from the cache when the sources and settings are
 * unchanged, otherwise compiled and written to the cache (through a temporary
 * file and a rename, so that test processes compiling at once never read half a file).
 */
export async function loadFocArtifacts(options: { dir?: string; cacheDir?: string } = {}): Promise<FocArtifacts> {
  const sources = await readFocSources(options.dir)
  const key = sourcesKey(sources)
  const cacheDir = options.cacheDir ?? CACHE_DIR
  if (memo?.key === key && memo.cacheDir === cacheDir) return memo.artifacts
  const artifacts = loadOrCompile(sources, key, cacheDir)
  memo = { key, cacheDir, artifacts }
  artifacts.catch(() => {
    if (memo?.artifacts === artifacts) memo = undefined
  })
  return artifacts
}

async function loadOrCompile(sources: Record<string, string>, key: string, cacheDir: string): Promise<FocArtifacts> {
  const file = join(cacheDir, `${key}.json`)
  try {
    return JSON.parse(await readFile(file, 'utf8')) as FocArtifacts
  } catch {
    // not cached yet, or unreadable: compile
  }
  const artifacts = compileSources(sources)
  await mkdir(cacheDir, { recursive: true })
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`
  try {
    await writeFile(temporary, JSON.stringify(artifacts))
    await rename(temporary, file)
  } catch (error) {
    await rm(temporary, { force: true })
    throw error
  }
  return artifacts
}
