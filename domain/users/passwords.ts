import argon2 from 'argon2';

/** OWASP's argon2id profile: 19 MiB, t=2, p=1. */
const OPTIONS = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

export const MAX_PASSWORD_BYTES = 1024;

/**
 * argon2id PHC string in the reference parameter order `m=…,t=…,p=…` (node-argon2 writes `m,p,t`, which
 * the reference decoder and other languages' verifiers do not accept; node-argon2 reads either order).
 */
export async function hashPassword(password: string): Promise<string> {
  const hash = await argon2.hash(password, OPTIONS);
  return hash.replace(/^(\$argon2id\$v=\d+\$)m=(\d+),p=(\d+),t=(\d+)\$/, '$1m=$2,t=$4,p=$3$');
}

// A real hash of a random value: verifying against it costs the same as for a real user.
let dummyHash: Promise<string> | undefined;

/** Verifies a password; with no stored hash it still spends the time of a verification (no user oracle). */
export async function verifyPassword(
  storedHash: string | null | undefined,
  password: string,
): Promise<boolean> {
  if (!storedHash) {
    dummyHash ??= hashPassword(`dummy-${Math.random()}`);
    await argon2.verify(await dummyHash, password).catch(() => false);
    return false;
  }
  return argon2.verify(storedHash, password).catch(() => false);
}
