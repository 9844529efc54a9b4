import { describe, expect, it } from 'vitest'
import { formatAddress, isIdAddress, parseAddress } from '../../server/shared/address.ts'

// Real mainnet addresses (go-address test vectors, the zero EVM address, the FEVM docs example).
const VALID = [
  ['f01024', 0],
  ['f0999999', 0],
  ['f15ihq5ibzwki2b4ep2f46avlkrqzhpqgtga7pdrq', 1],
  ['f17uoq6tp427uzv7fztkbsnn64iwotfrristwpryy', 1],
  ['f24vg6ut43yw2h2jqydgbg2xq7x6f4kub3bg6as6i', 2],
  ['f25nml2cfbljvn4goqtclhifepvfnicv6g7mfmmvq', 2],
  ['f3vvmn62lofvhjd2ugzca6sof2j2ubwok6cj4xxbfzz4yuxfkgobpihhd2thlanmsh3w2ptld2gqkn2jvlss4a', 3],
  ['f3wmuu6crofhqmm3v4enos73okk2l366ck6yc4owxwbdtkmpk42ohkqxfitcpa57pjdcftql4tojda2poeruwa', 3],
  ['f410faaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaonc6iji', 4],
  ['t410f2oekwcmo2pueydmaq53eic2i62crtbeyuzx2gmy', 4],
] as const

describe('Filecoin addresses', () => {
  it.each(VALID)('accepts %s (protocol %i)', (text, protocol) => {
    const r = parseAddress(text)
    expect(r.ok).toBe(true)
    if (r.ok) expect(r.address.protocol).toBe(protocol)
  })

  it('decodes the payload of an f1 address (20-byte hash before the checksum)', () => {
    const r = parseAddress('f17uoq6tp427uzv7fztkbsnn64iwotfrristwpryy')
    expect(r.ok && Buffer.from(r.address.payload).toString('hex')).toBe('fd1d0f4dfcd7e99afcb99a8326b7dc459d32c628')
  })

  it('decodes the Ethereum address inside an f410 address', () => {
    const r = parseAddress('t410f2oekwcmo2pueydmaq53eic2i62crtbeyuzx2gmy')
    // payload = leb128(10) ‖ 20-byte eth address
    expect(r.ok && Buffer.from(r.address.payload).toString('hex')).toBe('0ad388ab098ed3e84c0d808776440b48f685198498')
    expect(r.ok && r.address.namespace).toBe('10')
  })

  it.each([
    ['f17uoq6tp427uzv7fztkbsnn64iwotfrristwpryz', 'flipped last character'],
    ['f17uoq6tp427uzv7fztkbsnn64iwotfrristwpryya', 'one character too many'],
    ['f17aoq6tp427uzv7fztkbsnn64iwotfrristwpryy', 'checksum mismatch in the payload'],
    ['f24vg6ut43yw2h2jqydgbg2xq7x6f4kub3bg6as6j', 'actor checksum mismatch'],
    ['f410faaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaonc6ijj', 'delegated checksum mismatch'],
    ['f09223372036854775808', 'ID of 2^63'],
    ['f0012', 'leading zero'],
    ['f0', 'empty id'],
    ['x01024', 'bad network letter'],
    ['f51024', 'unknown protocol'],
    ['F01024', 'upper case'],
    ['f1', 'no payload'],
    ['', 'empty'],
  ])('rejects %s (%s)', (text) => {
    expect(parseAddress(text).ok).toBe(false)
  })

  it('accepts the largest ID address', () => {
    expect(isIdAddress('f09223372036854775807')).toBe(true)
  })

  it('round-trips an address it formats', () => {
    const payload = Buffer.from('fd1d0f4dfcd7e99afcb99a8326b7dc459d32c628', 'hex')
    expect(formatAddress('mainnet', 1, payload)).toBe('f17uoq6tp427uzv7fztkbsnn64iwotfrristwpryy')
  })
})
