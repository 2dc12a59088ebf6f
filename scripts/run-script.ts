import { ConfigError } from '../config/env.js';
import { ConnectionError } from '../config/connection-check.js';

/**
 * Runs a command-line script: a config error prints one line naming the variable and exits 2; a service that
 * refuses the connection at start-up (checkConnections) prints one line naming it, its host and the setting, exit 1.
 */
export async function runScript(main: () => Promise<void>): Promise<void> {
  try {
    await main();
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(2);
    }
    if (error instanceof ConnectionError) {
      console.error(error.message);
      process.exit(1);
    }
    console.error(error instanceof Error ? (error.stack ?? error.message) : error);
    process.exit(1);
  }
}
