import { parseArgs } from 'node:util';
import { createInterface } from 'node:readline';
import { loadConfig, readCliPassword } from '../config/env.js';
import { openOrm } from '../config/database.js';
import { createUser } from '../domain/users/create-user.js';
import { ROLES, type Role } from '../domain/users/roles.js';
import { AppError } from '../domain/shared/errors.js';
import { runScript } from './run-script.js';

const USAGE = `usage: npm run user:create -- --username <name> [--role ROLE_USER|ROLE_ADMIN] [--email <e-mail>] [--full-name <name>]
The password comes from STOCKROOM_USER_PASSWORD, or is asked for (hidden) when that is unset.`;

/** Reads a line without echoing it (a password prompt on a terminal). */
async function promptHidden(question: string): Promise<string> {
  if (!process.stdin.isTTY) {
    const rl = createInterface({ input: process.stdin });
    for await (const line of rl) {
      rl.close();
      return line;
    }
    return '';
  }
  process.stdout.write(question);
  const rl = createInterface({ input: process.stdin, output: undefined, terminal: true });
  return new Promise(resolve =>
    rl.question('', answer => {
      rl.close();
      process.stdout.write('\n');
      resolve(answer);
    }),
  );
}

/** `npm run user:create`: creates a password account (argon2id) in the configured database. */
await runScript(async () => {
  const { values } = parseArgs({
    options: {
      username: { type: 'string' },
      role: { type: 'string', default: 'ROLE_USER' },
      email: { type: 'string' },
      'full-name': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help || !values.username) {
    console.error(USAGE);
    process.exit(values.help ? 0 : 2);
  }
  const role = values.role as Role;
  if (!ROLES.includes(role)) {
    console.error(`--role must be one of ${ROLES.join(', ')}`);
    process.exit(2);
  }
  const password = readCliPassword() ?? (await promptHidden('Password: '));
  const config = loadConfig();
  const orm = await openOrm(config.databaseUrl, 1, { caPem: config.databaseCa });
  try {
    const user = await createUser(orm.em.fork(), {
      username: values.username,
      password,
      role,
      email: values.email,
      fullName: values['full-name'],
    });
    console.log(`created user ${user.username} (${user.role}, id ${user.id})`);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    const messages: Record<string, string> = {
      'auth.user.exists': `a user named ${values.username} (or with that e-mail) already exists`,
      'auth.password.required': 'the password must not be empty',
      'auth.password.too.long': 'the password must be at most 1024 bytes',
      'auth.username.required': 'the username must be 1 to 255 characters',
    };
    console.error(messages[error.messageKey] ?? error.messageKey);
    process.exitCode = 1;
  } finally {
    await orm.close(true);
  }
});
