/** Who makes a change and under which request: stored on every outbox event and history entry. */
export interface WriteContext {
  /** The authenticated user's e-mail, or username for password accounts (never a client-sent value). */
  user: string;
  correlationId: string | null;
}
