/**
 * The IPIP-499 profiles files and folders can get their CIDs with (the
 * layouts are in gateway/content/unixfs-dag.ts). Here because the
 * configuration names them too.
 */
export type CidProfile = 'unixfs-v1-2025' | 'kubo-cid-v1'

export const CID_PROFILES = ['unixfs-v1-2025', 'kubo-cid-v1'] as const satisfies readonly CidProfile[]
/** What Kubo 0.40+, filecoin-pin and Pinata give files, so a user's other tools agree with us. */
export const DEFAULT_CID_PROFILE: CidProfile = 'unixfs-v1-2025'
/** What entries stored before profiles were recorded were imported with. */
export const LEGACY_CID_PROFILE: CidProfile = 'kubo-cid-v1'
