import { randomInt } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';

/** `SKU-` + 8 uppercase letters/digits from the crypto RNG (36^8 ≈ 2.8e12 values; clashes are retried). */
export function generateSku(): string {
  let suffix = '';
  for (let i = 0; i < 8; i += 1) suffix += ALPHABET[randomInt(ALPHABET.length)];
  return `SKU-${suffix}`;
}

export const SKU_PATTERN = /^SKU-[A-Z0-9]{8}$/;
