import argon2 from 'argon2';

/** OWASP's argon2id profile: 19 MiB, t=2, p=1. */
const OPTIONS = { type: argon2.argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

export const MAX_PASSWORD_BYTES = 1024;

export async function hashPassword(password: string): Promise<string> {
  return argon2.hash(password, OPTIONS);
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
