import { t } from '@nextcloud/l10n'

/**
 * One sentence each for the Filecoin words the tab uses, for people who are
 * not storage experts; shown as the word's tooltip. Functions, not
 * constants: t() must run after the app's translations are loaded.
 */
export const glossary = {
  cid: () => t('gateway', 'Content ID: a fingerprint of exactly these bytes; anyone holding the same data gets the same CID.'),
  // Issue 38, item 7: explorers and providers show one group under several piece CIDs; the tooltip says why.
  pieceCid: () =>
    t(
      'gateway',
      'Piece CID: the fingerprint of the packed group of files that storage providers store and prove on the Filecoin chain. The same group can appear under other piece CIDs: a deal may pad it to a larger piece size, which gives another v1 piece CID (baga6ea4seaq…), and Filecoin Onchain Cloud names it by a v2 piece CID (bafkzcib…), which also carries the data size.',
    ),
  group: () =>
    t('gateway', 'Group: files are packed together into groups of about 64 MiB, because storage providers store data in large pieces.'),
  deal: () => t('gateway', 'Deal: a contract on the Filecoin chain in which a storage provider promises to keep a piece for a given time.'),
  pdpCopy: () =>
    t(
      'gateway',
      'Warm copy: a copy kept ready to read on a Filecoin Onchain Cloud provider, which proves every day on chain that it still holds the data (PDP), paid in USDFC for as long as the account is funded.',
    ),
  proofMissed: () =>
    t(
      'gateway',
      'Proof missed: the provider did not prove in time, on chain, that it still holds the data. The copy still counts for two more proving periods (two days on mainnet); without a proof by then another copy is made and this one is no longer paid for.',
    ),
  provider: () =>
    t('gateway', 'Storage provider: a company or person who runs Filecoin storage and is paid to keep the data and prove it regularly.'),
  epoch: () => t('gateway', 'Epoch: Filecoin counts time in epochs of 30 seconds; deals start and end at an epoch.'),
}
