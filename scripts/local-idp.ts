import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import Provider, { type Configuration } from 'oidc-provider';

/** A test account of the local provider. Any other login name works too (see {@link claimsFor}). */
export interface LocalAccount {
  login: string;
  email: string;
  name?: string;
  picture?: string;
  emailVerified?: boolean;
}

export interface LocalIdpOptions {
  /** Port on 127.0.0.1; 0 picks a free one. */
  port?: number;
  /** Exact redirect URIs of the registered client (Stockroom's `/login/oauth2/code/{provider}`). */
  redirectUris?: string[];
  clientId?: string;
  clientSecret?: string;
  accounts?: LocalAccount[];
  /** More clients with the same redirect URIs (tests: a code issued to another client must not sign in). */
  otherClientIds?: string[];
}

export interface LocalIdp {
  issuer: string;
  port: number;
  clientId: string;
  clientSecret: string;
  accounts: readonly LocalAccount[];
  /** The environment that wires Stockroom to this provider. */
  env(): Record<string, string>;
  close(): Promise<void>;
}

export const DEFAULT_LOCAL_IDP_PORT = 9400;
/** Client secret of the development wiring: a fixed value, so `npm run idp` output stays valid across restarts. */
export const LOCAL_CLIENT_SECRET = 'stockroom-local-development-secret';

export const DEFAULT_ACCOUNTS: LocalAccount[] = [
  { login: 'admin', email: 'admin@stockroom.local', name: 'Local Admin' },
  { login: 'alice', email: 'alice@stockroom.local', name: 'Alice Example' },
  { login: 'bob', email: 'bob@stockroom.local', name: 'Bob Example' },
];

/**
 * Claims of a login name: a listed account, or any login that is an e-mail address, or `<login>@stockroom.local`.
 * devInteractions accepts any login name and password, so every name is a usable account.
 */
export function claimsFor(accounts: readonly LocalAccount[], sub: string): Record<string, unknown> {
  const account = accounts.find(a => a.login === sub);
  const email = account?.email ?? (sub.includes('@') ? sub : `${sub}@stockroom.local`);
  return {
    sub,
    email,
    email_verified: account?.emailVerified ?? true,
    name: account?.name ?? sub,
    ...(account?.picture ? { picture: account.picture } : {}),
  };
}

function buildProvider(issuer: string, options: Required<Omit<LocalIdpOptions, 'port'>>): Provider {
  const configuration: Configuration = {
    clients: [options.clientId, ...options.otherClientIds].map(clientId => ({
      client_id: clientId,
      client_secret: clientId === options.clientId ? options.clientSecret : randomBytes(24).toString('hex'),
      redirect_uris: options.redirectUris.length > 0 ? options.redirectUris : [`${issuer}/unused-callback`],
      grant_types: ['authorization_code'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_post',
    })),
    cookies: { keys: [randomBytes(32).toString('hex')] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'picture'] },
    findAccount: (_ctx, sub) => ({
      accountId: sub,
      claims: () => claimsFor(options.accounts, sub) as { sub: string },
    }),
    features: { devInteractions: { enabled: true } },
    ttl: {
      AuthorizationCode: 60,
      Interaction: 600,
      Session: 8 * 3600,
      Grant: 8 * 3600,
      AccessToken: 600,
      IdToken: 600,
    },
    // Put e-mail and name into the ID token: passport-openidconnect builds the profile from it.
    conformIdTokenClaims: false,
  };
  const provider = new Provider(issuer, configuration);
  // Development-only warnings (in-memory adapter, generated keys) go to the console; errors are answered.
  provider.on('server_error', () => undefined);
  return provider;
}

/**
 * A real OpenID provider (oidc-provider, devInteractions) on 127.0.0.1, for development (`npm run idp`,
 * `npm start` without OIDC_ISSUER_URL) and tests. In-memory only: restart and every session is gone.
 */
export async function startLocalIdp(options: LocalIdpOptions = {}): Promise<LocalIdp> {
  const settings = {
    redirectUris: options.redirectUris ?? [],
    clientId: options.clientId ?? 'stockroom-local',
    clientSecret: options.clientSecret ?? randomBytes(24).toString('hex'),
    accounts: options.accounts ?? DEFAULT_ACCOUNTS,
    otherClientIds: options.otherClientIds ?? [],
  };
  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULT_LOCAL_IDP_PORT, '127.0.0.1', resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  const issuer = `http://127.0.0.1:${port}`;
  // The issuer names the port, so the provider is built once the server listens.
  const callback = buildProvider(issuer, settings).callback();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => void callback(req, res));
  return {
    issuer,
    port,
    clientId: settings.clientId,
    clientSecret: settings.clientSecret,
    accounts: settings.accounts,
    env: () => ({
      OIDC_ISSUER_URL: issuer,
      OIDC_CLIENT_ID: settings.clientId,
      OIDC_CLIENT_SECRET: settings.clientSecret,
    }),
    close: () =>
      new Promise<void>(resolve => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
