import type { Request, Response } from 'express';
import { isTransactionConflict } from '../../domain/shared/db-errors.js';

/** Attempts of a write whose transaction lost a deadlock or a serialization check (bounded). */
export const CONFLICT_ATTEMPTS = 5;

const pause = (attempt: number) =>
  new Promise(resolve => setTimeout(resolve, 5 * 2 ** attempt + Math.floor(Math.random() * 20)));

/**
 * Runs a write handler and runs it again (up to {@link CONFLICT_ATTEMPTS} times, short jittered pauses) when
 * its transaction was rolled back by a deadlock (40P01) or a serialization failure (40001). The handler is the
 * transaction boundary: every write commits its effect in ONE transaction (or one statement), so a rolled-back
 * attempt left nothing behind. Each retry is logged with its attempt number; a request that still conflicts
 * after the last attempt answers 409 (db-errors), never a 500.
 */
export async function retryTransactionConflicts(
  req: Request,
  res: Response,
  work: () => Promise<unknown>,
): Promise<void> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await work();
      return;
    } catch (error) {
      if (!isTransactionConflict(error) || res.headersSent || attempt >= CONFLICT_ATTEMPTS) throw error;
      req.log.warn(
        { attempt, sqlState: (error as { code?: string }).code, correlationId: req.correlationId },
        'transaction conflict (deadlock or serialization failure): retrying the write',
      );
      await pause(attempt);
      // A fresh unit of work for the next attempt: nothing of the rolled-back one is carried over.
      const em = req.em.fork({ clear: true });
      Object.defineProperty(req, 'em', { configurable: true, enumerable: false, get: () => em });
    }
  }
}
