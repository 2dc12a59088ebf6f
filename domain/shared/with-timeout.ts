/**
 * Settles with `promise`, or rejects with `onTimeout()` after `ms`. A late rejection of the original promise is
 * swallowed, so a caller that gave up never sees an unhandled rejection.
 */
export async function withTimeout<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
    promise.catch(() => undefined);
  }
}
